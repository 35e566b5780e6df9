"""`benchmarks/mutation_audit.py`: every planted bug can still be planted (a module that moved
or changed is named, so the audit stays re-runnable), and one bug planted in a copy of the
tree is caught there, not in the checkout."""

from __future__ import annotations

import functools
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "benchmarks" / "mutation_audit.py"
# issue 39: the bugs that survived its audit, each with a test of its own since
SURVIVORS = {
    "lm_resume_limit",
    "lm_resume_model_name",
    "lm_resume_task_version",
    "key_left_in_environ",
    "auth_token_not_secret",
    "timeout_zero",
    "preflight_403_not_refused",
    "preflight_500_boundary",
    "cache_key_no_code",
    "cache_key_no_shape",
    "read_limit_nan",
    "display_uri_unchanged",
    "fit_kwargs_dropped",
    "own_matrix_ranges_unchecked",
}


@functools.cache
def script() -> ModuleType:
    """The script as a module (registered first: its dataclass looks itself up there)."""
    spec = importlib.util.spec_from_file_location("mutation_audit", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def audit(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=timeout,
        check=False,
    )


def test_every_bug_of_the_audit_can_be_planted() -> None:
    mutations = script().MUTATIONS
    assert len(mutations) >= 36
    assert {m.name for m in mutations if m.survivor} == SURVIVORS
    done = audit("--check")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith(f"{len(mutations)} mutations can be planted in ")


def test_an_unknown_mutation_is_refused() -> None:
    done = audit("--only", "no_such_bug")
    assert done.returncode != 0
    assert "no mutation named no_such_bug (--list shows them)" in done.stderr


@pytest.mark.slow
def test_a_planted_bug_is_caught_in_a_copy_and_the_checkout_is_untouched() -> None:
    module = REPO_ROOT / script().FILES["track_export"]
    before = module.read_bytes()
    done = audit("--only", "display_uri_unchanged", timeout=600)
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("[")]
    assert line.split("]", 1)[1].split()[:2] == ["display_uri_unchanged", "caught"]
    assert "test_guard_rails.py::test_a_tracking_uri_is_shown_without_its_credentials" in line
    assert "\ncaught 1 of 1 planted bugs (" in done.stdout
    assert module.read_bytes() == before
