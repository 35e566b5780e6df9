"""The import paths the API docs named before `predictor` was laid out in packages still work
for one release: the same public objects, with a DeprecationWarning naming the new place."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

OLD_PATHS = {
    "predictor.completion": "predictor.fit.completion",
    "predictor.own_matrix": "predictor.fit.own_matrix",
    "predictor.resolve": "predictor.names.resolve",
    "predictor.paths": "predictor.util.paths",
    "predictor.model_names": "predictor.names.model_names",
    "predictor.families": "predictor.names.families",
    "predictor.confusables": "predictor.names.confusables",
}


@pytest.mark.parametrize(("old", "new"), sorted(OLD_PATHS.items()))
def test_an_old_path_is_the_new_module_and_says_where_it_went(old: str, new: str) -> None:
    code = (
        "import warnings\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        f"    import {old} as old_module\n"
        f"import {new} as new_module\n"
        "public = [n for n, v in vars(new_module).items() if not n.startswith('_')\n"
        "          and getattr(v, '__module__', None) == new_module.__name__]\n"
        "assert public and all(getattr(old_module, n) is getattr(new_module, n) for n in public)\n"
        "print([str(w.message) for w in seen if w.category is DeprecationWarning])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"{old} moved to {new}" in done.stdout


def test_the_names_the_docs_show_import_from_the_old_paths() -> None:
    from predictor.completion import Completion, complete_matrix  # noqa: F401
    from predictor.own_matrix import ScoresFrameError
    from predictor.resolve import AmbiguousNameError, UnknownNameError  # noqa: F401

    assert ScoresFrameError is importlib.import_module("predictor.fit.own_matrix").ScoresFrameError


def test_the_packages_keep_the_old_modules_names() -> None:
    """`predictor.snapshots`, `predictor.evaluation` and `predictor.tracking` were modules."""
    import predictor.evaluation
    import predictor.snapshots
    import predictor.tracking

    assert predictor.snapshots.SnapshotError.__name__ == "SnapshotError"
    assert callable(predictor.snapshots.input_identity)
    assert callable(predictor.evaluation.per_model_folds)
    assert callable(predictor.tracking.step_of)
    with pytest.raises(AttributeError):
        predictor.snapshots.no_such_name  # noqa: B018
