"""The modules built on `BenchPress` work through its public `FittedMatrix` interface alone.

`trust/`, `new_benchmark`, `reference_names` and `drift` used to read `BenchPress` private
members (`_column`, `_dense`, `_scale`, `_probe_row`) and to name the class for type hints,
which hid an import circle api -> new_benchmark -> reference_names -> api. Here each consumer
runs on a stand-in that offers only the interface's members and must answer exactly as on the
`BenchPress` itself; the structural checks keep the private reads and the circle out."""

from __future__ import annotations

import ast
import dataclasses
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from polars.testing import assert_frame_equal

from predictor import BenchPress
from predictor.drift import prediction_shift
from predictor.fitted_matrix import FittedMatrix
from predictor.new_benchmark import predict_benchmark
from predictor.reference_names import resolve_reference
from predictor.trust import (
    compare_with_known_models,
    select_probes_for,
    suspicious_scores,
    what_to_run_next,
)
from predictor.trust import suspicious as suspicious_module
from predictor.trust.reference_choice import default_references
from predictor.util.paths import bundled_snapshot_dir
from predictor.values import ProbeScoreError

REPO = Path(__file__).resolve().parents[2]
PREDICTOR = REPO / "predictor"
STRONG = {"gpqa_diamond": 80, "hle": 20, "mmlu_pro": 80}
ALLOW = ["gpqa_diamond", "mmlu_pro", "hle", "aime_2025", "ifeval"]
MEMBERS = frozenset(name for name in vars(FittedMatrix) if not name.startswith("_"))


class OnlyTheInterface:
    """A `BenchPress` seen through `FittedMatrix` alone: any other attribute is an error."""

    def __init__(self, bp: BenchPress) -> None:
        self._wrapped = bp

    def __getattr__(self, name: str) -> Any:
        if name not in MEMBERS:
            raise AttributeError(f"{name!r} is not part of the FittedMatrix interface")
        return getattr(self._wrapped, name)


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(store=bundled_snapshot_dir())


def test_benchpress_offers_the_interface(bp: BenchPress) -> None:
    assert isinstance(bp, FittedMatrix)
    assert {"fit_columns", "observed_values", "scale_of", "probe_row"} <= MEMBERS
    assert dict(bp.fit_columns) == {b: j for j, b in enumerate(bp.fit_benchmarks_)}
    with pytest.raises(TypeError):
        bp.fit_columns["gpqa_diamond"] = 0  # read-only: the fit's columns are not callers' to move
    assert "gpqa_diamond" in bp.fit_columns and "no_such_benchmark" not in bp.fit_columns
    view = bp.matrix()
    rows = [view.models.index(m) for m in bp.fit_models_[:5]]
    cols = [view.benchmarks.index(b) for b in ALLOW]
    np.testing.assert_array_equal(
        bp.observed_values(bp.fit_models_[:5], ALLOW), view.values[np.ix_(rows, cols)]
    )
    assert bp.scale_of("gpqa_diamond") == "percent"
    assert {bp.scale_of(b) for b in bp.fit_benchmarks_} == {"percent", "unbounded"}


def test_probe_row_lays_checked_scores_on_the_fitted_columns(bp: BenchPress) -> None:
    row = bp.probe_row({"GPQA Diamond": 80, "hle": 20})
    assert row.shape == (len(bp.fit_benchmarks_),)
    assert row[bp.fit_columns["gpqa_diamond"]] == 80.0 and row[bp.fit_columns["hle"]] == 20.0
    assert int(np.isfinite(row).sum()) == 2
    with pytest.raises(ProbeScoreError, match="0-100"):
        bp.probe_row({"gpqa_diamond": 180})
    with pytest.raises(ProbeScoreError, match="given twice"):
        bp.probe_row({"gpqa_diamond": 80, "GPQA Diamond": 81})


def test_trust_answers_the_same_through_the_interface_alone(bp: BenchPress) -> None:
    seen = OnlyTheInterface(bp)
    with pytest.raises(AttributeError, match="not part of the FittedMatrix interface"):
        seen._column  # noqa: B018  (the stand-in really hides the privates)

    probes = [
        select_probes_for(m, k=2, targets="reasoning", allowlist=ALLOW, runnable="lm_eval")
        for m in (seen, bp)
    ]
    assert probes[0] == probes[1] and len(probes[0].benchmarks) == 2
    plain = [select_probes_for(m, k=2, targets="reasoning", allowlist=ALLOW) for m in (seen, bp)]
    assert plain[0] == plain[1]

    assert_frame_equal(
        what_to_run_next(seen, STRONG, targets="reasoning"),
        what_to_run_next(bp, STRONG, targets="reasoning"),
    )
    refs = default_references(seen, "reasoning")
    assert refs == default_references(bp, "reasoning") and refs
    assert_frame_equal(
        compare_with_known_models(seen, STRONG, refs, targets="reasoning").to_frame(),
        compare_with_known_models(bp, STRONG, refs, targets="reasoning").to_frame(),
    )


def test_suspicious_scores_recomputed_through_the_interface(
    bp: BenchPress, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot without stored residuals is checked against its observed cells."""
    older = BenchPress(dataclasses.replace(bp.snapshot, residuals=None))
    monkeypatch.setattr(suspicious_module, "_CACHE", {})  # recompute, not a cached answer
    through = suspicious_scores(OnlyTheInterface(older), threshold=5.0)
    monkeypatch.setattr(suspicious_module, "_CACHE", {})
    assert_frame_equal(through, suspicious_scores(older, threshold=5.0))
    assert through.height > 0


def test_new_benchmark_and_references_through_the_interface(bp: BenchPress) -> None:
    seen = OnlyTheInterface(bp)
    # a model of the snapshot with scores, but too few of them to be in the fit
    unfitted = [m for m in bp.models if m not in set(bp.fit_models_)][:200]
    values = bp.observed_values(unfitted, bp.fit_benchmarks_)
    outside = next(m for m, row in zip(unfitted, values, strict=True) if np.isfinite(row).any())
    scores = {bp.fit_models_[0]: 50.0, bp.fit_models_[1]: 60.0, bp.fit_models_[2]: 70.0}
    scores[outside] = 55.0
    through = predict_benchmark(seen, scores).as_dict()
    assert through == predict_benchmark(bp, scores).as_dict()
    assert any(row["model_id"] == outside for row in through["predictions"])

    targets = ["gpqa_diamond", "mmlu_pro"]
    ref = resolve_reference(seen, bp.fit_models_[3])
    assert ref.predictions(targets, 0.9) == resolve_reference(bp, bp.fit_models_[3]).predictions(
        targets, 0.9
    )


def test_drift_compares_a_snapshot_with_itself_as_unmoved(bp: BenchPress) -> None:
    shift = prediction_shift(bp.snapshot, bp.snapshot)
    assert shift["n"] > 0 and shift["median"] == 0.0 and shift["p90"] == 0.0


# ---------------------------------------------------------------------- structure
def _benchpress_privates() -> set[str]:
    """Every private member `BenchPress` defines (methods and `self._x` attributes)."""
    tree = ast.parse((PREDICTOR / "api.py").read_text("utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "BenchPress")
    names = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.FunctionDef) and node.name.startswith("_"):
            names.add(node.name)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ):
            names.add(node.attr)
    return {n for n in names if n.startswith("_") and not n.endswith("__")}


def test_no_predictor_module_reads_benchpress_privates() -> None:
    privates = _benchpress_privates()
    assert {"_column", "_dense", "_scale"} <= privates
    reads = []
    for path in sorted(PREDICTOR.rglob("*.py")):
        if path == PREDICTOR / "api.py":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in privates
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                rel = path.relative_to(REPO).as_posix()
                reads.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert reads == [], "use the FittedMatrix interface (predictor/fitted_matrix.py)"


def _above_the_api() -> set[str]:
    """The predictor's top-level modules in the layers above `api` (pyproject.toml), and api."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    contract = next(
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["type"] == "layers" and c.get("containers") == ["predictor"]
    )
    above: set[str] = set()
    for layer in contract["layers"]:
        names = {n.strip() for n in layer.replace("|", ":").split(":")}
        above |= names
        if "api" in names:
            return above
    raise AssertionError("no api layer in the predictor's layers contract")


def _imports_the_api(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(
            a.name == "predictor.api" or a.name.startswith("predictor.api.") for a in node.names
        )
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        if node.module == "predictor":
            return any(a.name == "api" for a in node.names)
        return node.module == "predictor.api" or node.module.startswith("predictor.api.")
    return False


def test_nothing_below_the_api_imports_it_even_for_type_hints() -> None:
    """Type-only imports count: an edge under `TYPE_CHECKING` is still a circle in the design."""
    above = _above_the_api()
    offenders = []
    for path in sorted(PREDICTOR.rglob("*.py")):
        parts = path.relative_to(PREDICTOR).with_suffix("").parts
        if parts == ("__init__",) or parts[0] in above:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if _imports_the_api(node):
                offenders.append(f"{path.relative_to(REPO).as_posix()}:{node.lineno}")
    assert offenders == [], "type against predictor.fitted_matrix.FittedMatrix instead"
