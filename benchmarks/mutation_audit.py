"""Mutation audit of the newest modules: does the suite catch the bugs that could slip in?

Each entry of `MUTATIONS` plants one bug (an exact piece of a module's text replaced by
another) in a copy of the working tree and runs the tests that should catch it there, with
this checkout's `.venv` Python and the copy first on `PYTHONPATH`:

    .venv/bin/python benchmarks/mutation_audit.py                  # all (~10 min on 2 cores)
    .venv/bin/python benchmarks/mutation_audit.py --list           # names, files, tests
    .venv/bin/python benchmarks/mutation_audit.py --only lm_resume_limit --only read_limit_nan
    .venv/bin/python benchmarks/mutation_audit.py --baseline       # the named tests, no bug
    .venv/bin/python benchmarks/mutation_audit.py --check          # can each bug be planted?

A mutation's tests are files or pytest node ids, fast ones first: it is *caught* when they
fail (pytest `-x`: the first failure ends the run) and *survives* when they all pass. The
working tree (tracked files and untracked ones git does not ignore, so uncommitted work is in)
is copied once when the audit starts and each mutation gets its own copy of that, so edits
made in the checkout meanwhile change nothing. Before its tests run, the copy is checked to be
what Python imports (the mutated module's `__file__`). An old text found other than exactly
once stops the audit before anything runs: a module moved or changed, and `FILES` (or the
mutation) needs updating. `--baseline` runs every test the selected mutations name, once, on
the unmutated copy: a "caught" is only worth something when they pass there.

Issue 39's audit planted 36 bugs and 19 survived; this list holds the 14 survivors the issue
names (`survivor=True`, each caught by a test written for it since) and others of our own in
the same modules. The figures printed are the audit's result: nothing asserts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYTHON = REPO / ".venv" / "bin" / "python"  # the checkout's (else the one running this)
if not PYTHON.exists():
    PYTHON = Path(sys.executable)
TIMEOUT = 1800.0  # seconds one mutation's tests may take before the run is stopped
WHERE_FROM = "import importlib, sys; print(importlib.import_module(sys.argv[1]).__file__)"

# The modules the mutations edit, by a short name: the one table to update when a module moves.
FILES: dict[str, str] = {
    "runner": "predictor/runs/runner.py",
    "lm_eval_tool": "predictor/harnesses/lm_eval.py",
    "inspect_tool": "predictor/harnesses/inspect.py",
    "isolation": "predictor/runs/isolation.py",
    "preflight": "predictor/runs/preflight.py",
    "redact": "predictor/harnesses/redact.py",
    "settings": "predictor/runs/settings.py",
    "staging": "predictor/harnesses/staging.py",
    "limited": "predictor/results/limited.py",
    "locking": "predictor/util/locking.py",
    "calibration_cache": "predictor/fit/calibration_cache.py",
    "fitting": "predictor/fit/fitting.py",
    "own_matrix": "predictor/fit/own_matrix.py",
    "read_limits": "predictor/util/read_limits.py",
    "track_export": "predictor/tracking/export.py",
    "bayesian": "predictor/methods/bayesian.py",
    "rankings": "predictor/trust/rankings.py",
    "track_command": "warehouse/cli_private/commands.py",
    "probe_plan": "predictor/trust/probe_plan.py",
}

# test files, by what they cover
GUARDS = "tests/predictor/test_guard_rails.py"
RESUME = "tests/predictor/test_run_resume_guards.py"
RUN_SETTINGS = "tests/predictor/test_run_settings_guards.py"
REDACTION = "tests/predictor/test_run_redaction_guards.py"
RUN_PLAN = "tests/predictor/test_run_plan.py"
RUN_PROBES = "tests/predictor/test_run_probes.py"
RUN_SAFETY = "tests/predictor/test_run_endpoint_safety.py"
RUN_ISOLATION = "tests/predictor/test_run_isolation.py"
LIMITED_PROBES = "tests/predictor/test_limited_probe_runs.py"
LIMITED_RUNS = "tests/results/test_limited_runs.py"
SUBSETS = "tests/predictor/test_run_item_subsets.py"
CACHE = "tests/predictor/test_calibration_cache.py"
CALIBRATION = "tests/predictor/test_calibration.py"
OWN_MATRIX = "tests/predictor/test_own_matrix.py"
READ_LIMITS = "tests/results/test_read_limits.py"
TRACK = "tests/predictor/test_track_export.py"
TRACK_HARDENING = "tests/predictor/test_track_export_hardening.py"
NOISE = "tests/predictor/test_measurement_noise.py"
TRACK_COMMAND = "tests/warehouse/test_track.py"
BUDGET = "tests/predictor/test_probe_budget.py"


@dataclass(frozen=True)
class Mutation:
    """One planted bug: `old` (found exactly once in `FILES[file]`) replaced by `new`."""

    name: str
    file: str
    old: str
    new: str
    description: str
    tests: tuple[str, ...]
    survivor: bool = False  # survived the audit of issue 39


def _m(
    name: str, file: str, old: str, new: str, description: str, *tests: str, survivor: bool = False
) -> Mutation:
    return Mutation(name, file, old, new, description, tuple(tests), survivor)


MUTATIONS: tuple[Mutation, ...] = (
    # ------------------------------------------------------------------ runs: resuming
    _m(
        "lm_resume_limit",
        "lm_eval_tool",
        '                and config.get("limit") == limit\n',
        "",
        "resume ignores the item limit: a smoke run's file is taken for the full run",
        RESUME,
        LIMITED_PROBES,
        RUN_PROBES,
        survivor=True,
    ),
    _m(
        "lm_resume_model_name",
        "lm_eval_tool",
        '                and doc.get("model_name") == name\n',
        "",
        "resume ignores the model's name: another model's file is taken as this one's",
        RESUME,
        RUN_PROBES,
        survivor=True,
    ),
    _m(
        "lm_resume_task_version",
        "lm_eval_tool",
        "                and (want_version is None or str(versions.get(task)) == want_version)\n",
        "",
        "resume ignores the task's version: a file of an older task definition is reused",
        RESUME,
        RUN_PROBES,
        survivor=True,
    ),
    _m(
        "lm_resume_model_type",
        "lm_eval_tool",
        '                and config.get("model") == endpoint.model_type\n',
        "",
        "resume ignores the model type (completions vs chat)",
        RESUME,
        RUN_PROBES,
    ),
    _m(
        "inspect_resume_limit",
        "inspect_tool",
        "                and log.eval.config.limit == limit\n",
        "",
        "Inspect's resume ignores the sample limit",
        RESUME,
        RUN_PROBES,
    ),
    # ------------------------------------------------------------------ runs: the key
    _m(
        "key_left_in_environ",
        "isolation",
        "    _flush_streams()  # else what the streams hold is written twice, by each process\n",
        "    os.environ.update(variables)\n    _flush_streams()\n",
        "the key is set in the run's own environment (and stays there after the run)",
        f"{RUN_ISOLATION}::test_the_key_reaches_only_the_task_process",
        RUN_PROBES,
        survivor=True,
    ),
    _m(
        "auth_token_not_secret",
        "settings",
        'for secret in ("api_key", "auth_token"):',
        'for secret in ("api_key",):',
        "auth_token= in --model-args is accepted (lm-eval writes it into its results file)",
        RUN_SETTINGS,
        RUN_PLAN,
        survivor=True,
    ),
    _m(
        "runner_error_not_redacted",
        "runner",
        "text = redact(plain_text(str(error)), key) or type(error).__name__",
        "text = plain_text(str(error)) or type(error).__name__",
        "a failed task's error is recorded with the key in it",
        REDACTION,
        RUN_SAFETY,
    ),
    _m(
        "redact_nothing",
        "redact",
        "return text.replace(secret, REDACTED) if secret else text",
        "return text",
        "redact() leaves the key in the text",
        REDACTION,
        RUN_SAFETY,
        RUN_PROBES,
    ),
    _m(
        "redact_split_key",
        "redact",
        "for size in range(min(len(self.secret) - 1, len(text)), 0, -1):",
        "for size in range(0):",
        "a key split across two writes reaches the terminal",
        REDACTION,
        RUN_SAFETY,
    ),
    _m(
        "preflight_error_not_redacted",
        "preflight",
        "raise EndpointError(redact(str(error), endpoint.api_key)) from None",
        "raise EndpointError(str(error)) from None",
        "the endpoint check's error may quote the key",
        RUN_SETTINGS,
        RUN_SAFETY,
    ),
    # ------------------------------------------------------------------ runs: the endpoint
    _m(
        "timeout_zero",
        "settings",
        "if not (math.isfinite(value) and value > 0):",
        "if not (math.isfinite(value) and value >= 0):",
        "a request timeout of 0 is accepted",
        RUN_SETTINGS,
        RUN_PLAN,
        survivor=True,
    ),
    _m(
        "preflight_403_not_refused",
        "preflight",
        "if error.code in (401, 403):",
        "if error.code == 401:",
        "HTTP 403 from the model list is not a refused key: the run goes on",
        RUN_SETTINGS,
        RUN_PROBES,
        RUN_SAFETY,
        survivor=True,
    ),
    _m(
        "preflight_500_boundary",
        "preflight",
        "if error.code >= 500:",
        "if error.code > 500:",
        "HTTP 500 from the model list is not a server that is down",
        RUN_SETTINGS,
        RUN_PROBES,
        survivor=True,
    ),
    _m(
        "preflight_follows_redirects",
        "preflight",
        "        return None\n",
        "        return super().redirect_request(req, fp, code, msg, headers, newurl)\n",
        "the endpoint check follows a redirect (and sends the key elsewhere)",
        RUN_SAFETY,
    ),
    _m(
        "preflight_skipped",
        "runner",
        "        check_endpoint(endpoint)\n",
        "",
        "no endpoint check before the first task",
        RUN_PROBES,
    ),
    _m(
        "endpoint_options_allowed",
        "runner",
        "taken = sorted(ENDPOINT_OPTIONS & set(options))",
        "taken: list[str] = []",
        "harness options may replace the endpoint (model_args, model_base_url)",
        RUN_SAFETY,
    ),
    _m(
        "limit_zero_allowed",
        "runner",
        "int(limit) < 1)",
        "int(limit) < 0)",
        "limit=0 is accepted (a run of no items)",
        RUN_SETTINGS,
        RUN_PROBES,
    ),
    # ------------------------------------------------------------------ runs: each task
    _m(
        "limited_run_shares_folder",
        "staging",
        'return out if limit is None else out / f"{LIMITED_PREFIX}{int(limit)}"',
        "return out",
        "a smoke test's files go where the full run's do",
        LIMITED_PROBES,
        RUN_PROBES,
    ),
    _m(
        "killed_task_keeps_staging",
        "isolation",
        "    staging_folder(out, task, pid)  # what the child wrote",
        "    # what the child wrote",
        "what a task killed at its deadline wrote stays in <out>/.staging",
        RUN_SETTINGS,
        RUN_ISOLATION,
    ),
    _m(
        "task_timeout_zero_is_instant",
        "isolation",
        "        return given or None\n",
        "        return given\n",
        "--task-timeout 0 (no deadline) kills every task at once",
        RUN_SETTINGS,
        RUN_ISOLATION,
    ),
    _m(
        "task_deadline_no_minimum",
        "isolation",
        "return max(MIN_TASK_SECONDS, ESTIMATE_FACTOR * tokens / tokens_per_second)",
        "return ESTIMATE_FACTOR * tokens / tokens_per_second",
        "a small task's default deadline is seconds, not at least an hour",
        RUN_SETTINGS,
        RUN_PLAN,
    ),
    _m(
        "task_memory_cap_off",
        "isolation",
        "cap = memory if endpoint.is_api and memory else None",
        "cap = None",
        "no memory cap on a task that reads a server's answers",
        RUN_ISOLATION,
    ),
    _m(
        "infinite_logprob_scored",
        "isolation",
        "            if not math.isfinite(number):\n",
        "            if math.isnan(number):\n",
        "an infinite log-probability is scored",
        RUN_ISOLATION,
    ),
    # ------------------------------------------------------------------ limited results
    _m(
        "limited_used_silently",
        "limited",
        "    if allow_limited:\n",
        "    if True:\n",
        "a smoke test's scores are used without --allow-limited",
        LIMITED_RUNS,
    ),
    _m(
        "limited_supersedes_limited",
        "limited",
        "    if limited:\n        return SMOKE\n",
        "    if False:\n        return SMOKE\n",
        "a smoke test counts as the full run that supersedes smoke tests",
        LIMITED_RUNS,
    ),
    # ------------------------------------------------------------------ item subsets
    _m(
        "subset_resume_any",
        "lm_eval_tool",
        "                and record_matches(doc.get(SUBSET_KEY), subset)\n",
        "",
        "resume ignores the item subset: a subset's file is taken for the full run",
        SUBSETS,
    ),
    _m(
        "subset_shares_folder",
        "staging",
        "        return out / subset.folder\n",
        "        return out\n",
        "a subset run's files go where the full run's do",
        SUBSETS,
    ),
    _m(
        "subset_not_superseded",
        "limited",
        "        return 1.0 + (n or 0)\n",
        "        return FULL\n",
        "a smaller subset's score is not replaced by a larger run's (two scores of one probe)",
        SUBSETS,
    ),
    _m(
        "limited_other_models",
        "limited",
        'if limited and row["status"] == MAPPED and model in (None, row["model"]):',
        'if limited and row["status"] == MAPPED:',
        "another model's smoke test refuses the chosen model's full scores",
        GUARDS,
        LIMITED_RUNS,
    ),
    # ------------------------------------------------------------------ locking
    _m(
        "lock_wait_nan",
        "locking",
        "    if not value >= 0:  # also NaN\n",
        "    if value < 0:\n",
        "BENCHPRESS_TRACK_LOCK_WAIT=nan waits for ever",
        GUARDS,
        TRACK_HARDENING,
    ),
    _m(
        "lock_shared",
        "locking",
        "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)",
        "fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)",
        "two processes hold the lock at once",
        TRACK_HARDENING,
        TRACK,
    ),
    # ------------------------------------------------------------------ calibration cache
    _m(
        "cache_key_no_code",
        "calibration_cache",
        '{**inputs, "code": source_digest(("predictor",)), "numpy": np.__version__}',
        '{**inputs, "numpy": np.__version__}',
        "the cache key leaves out the code: another version's calibration is reused",
        GUARDS,
        CACHE,
        survivor=True,
    ),
    _m(
        "cache_key_no_shape",
        "calibration_cache",
        'digest.update(f"array:{array.dtype.str}:{array.shape}:".encode())',
        'digest.update(f"array:{array.dtype.str}:".encode())',
        "the cache key leaves out an array's shape",
        GUARDS,
        CACHE,
        survivor=True,
    ),
    _m(
        "cache_group_writable_folder",
        "calibration_cache",
        "    if mode & 0o022:\n",
        "    if mode & 0o002:\n",
        "a group-writable cache folder is trusted",
        CACHE,
    ),
    _m(
        "cache_entry_key_unchecked",
        "calibration_cache",
        ' or document.get("key") != key:',
        ":",
        "an entry is used without naming the key it was looked up by",
        CACHE,
    ),
    _m(
        "cache_thin_factor_trusted",
        "calibration_cache",
        "        if any(f != 1.0 for row in thin for f in row):\n",
        "        if False:\n",
        "an entry with a factor where too few residuals stood is used",
        CACHE,
    ),
    # ------------------------------------------------------------------ read limits
    _m(
        "read_limit_nan",
        "read_limits",
        '    if not value >= 0 or value == float("inf"):\n',
        '    if value < 0 or value == float("inf"):\n',
        "BENCHPRESS_READ_SECONDS=nan turns the limit off",
        GUARDS,
        READ_LIMITS,
        survivor=True,
    ),
    _m(
        "read_limit_memory_off",
        "read_limits",
        "if memory and self._base and _resident_bytes() - self._base > memory:",
        "if False:",
        "the memory budget of a read is never checked",
        READ_LIMITS,
    ),
    _m(
        "read_limit_inf",
        "read_limits",
        '    if not value >= 0 or value == float("inf"):\n',
        "    if not value >= 0:\n",
        "BENCHPRESS_READ_SECONDS=inf is accepted",
        READ_LIMITS,
    ),
    # ------------------------------------------------------------------ tracking export
    _m(
        "display_uri_unchanged",
        "track_export",
        "    parts = urlsplit(uri)\n    if parts.password is None and parts.username is None:\n",
        "    parts = urlsplit(uri)\n    if True:\n",
        "user:password@ of a tracking URI printed (CI logs)",
        GUARDS,
        TRACK_HARDENING,
        survivor=True,
    ),
    _m(
        "track_secrets_shown",
        "track_export",
        "    for secret in sorted(_secrets(uri), key=len, reverse=True):\n",
        "    for secret in ():\n",
        "credentials a tracking server echoes stay in the error",
        TRACK_HARDENING,
    ),
    _m(
        "track_sqlite_magic_unchecked",
        "track_export",
        "        if head and head != SQLITE_MAGIC:\n",
        "        if False:\n",
        "a file that is not a database is handed to MLflow",
        TRACK_HARDENING,
    ),
    # ------------------------------------------------------------------ fitting
    _m(
        "fit_kwargs_dropped",
        "fitting",
        "        fit_kwargs=kwargs,\n",
        "        fit_kwargs={},\n",
        "new-model intervals calibrated without the fit's side information",
        GUARDS,
        OWN_MATRIX,
        CALIBRATION,
        survivor=True,
    ),
    _m(
        "own_matrix_ranges_unchecked",
        "own_matrix",
        "    _check_ranges(frame, benchmarks)\n",
        "",
        "BenchPress.fit fits a score outside its benchmark's valid range",
        GUARDS,
        OWN_MATRIX,
        survivor=True,
    ),
    # ------------------------------------------------------------ measurement noise
    _m(
        "fold_in_ignores_noise",
        "bayesian",
        "base_w = 1.0 / (1.0 / base_w + extra[known])",
        "base_w = base_w",
        "the fold-in takes a probe's standard error as exact: a noisy probe moves it as far",
        NOISE,
    ),
    _m(
        "observed_scores_exact",
        "rankings",
        "        return Entry(name, p.score, noise.sd, p.low, p.high, True, noise)\n",
        "        return Entry(name, p.score, 0.0, p.low, p.high, True, noise)\n",
        "comparisons take observed scores as exact: 1.8 points apart is P = 0.00",
        NOISE,
    ),
    _m(
        "criteria_on_exact_scores",
        "track_command",
        "tracking.with_measurement_noise(draws, benchmarks, measured)",
        "draws",
        "track judges a criterion on an observed score as if it were exact",
        TRACK_COMMAND,
    ),
    # ------------------------------------------------------------ probe plans by cost
    _m(
        "plan_takes_near_duplicates",
        "probe_plan",
        "        if column not in self.plan and pool:\n",
        "        if False:\n",
        "a plan holds GPQA Diamond and GPQA Main: two benchmarks of one item pool",
        BUDGET,
    ),
    _m(
        "plan_full_tasks_only",
        "probe_plan",
        "        return [n for n in ITEM_STEPS if n < self.total] + [self.total]\n",
        "        return [self.total]\n",
        "a plan runs every task in full: no subset where it costs less for the same error",
        BUDGET,
    ),
    _m(
        "plan_over_budget",
        "probe_plan",
        "        return self.spent + self.extra(column, items) <= budget\n",
        "        return True\n",
        "a plan spends past its token budget",
        BUDGET,
    ),
    _m(
        "run_ignores_plan_items",
        "runner",
        "        {b: ItemSubset(n, items_seed) for b, n in plan_items.items()}\n",
        "        {}\n",
        "run runs the plan's benchmarks in full, not on the items the plan gives them",
        BUDGET,
    ),
)


# ---------------------------------------------------------------------- the working tree
def tree_files(repo: Path) -> list[str]:
    """The working tree's files: tracked ones that exist and untracked ones not ignored."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=repo,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8", "surrogateescape")
    names = sorted({n for n in listed.split("\0") if n})
    return [n for n in names if (repo / n).is_file() or (repo / n).is_symlink()]


def copy_tree(source: Path, names: list[str], target: Path) -> None:
    for name in names:
        dest = target / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / name, dest, follow_symlinks=False)


def problems(mutations: tuple[Mutation, ...], root: Path) -> list[str]:
    """Why a mutation cannot be planted in the tree at `root` (its file or old text)."""
    found = []
    for m in mutations:
        if m.file not in FILES:
            found.append(f"{m.name}: no file named {m.file!r} in FILES")
            continue
        path = root / FILES[m.file]
        if not path.is_file():
            found.append(f"{m.name}: {FILES[m.file]} does not exist (moved? update FILES)")
            continue
        count = path.read_text(encoding="utf-8").count(m.old)
        if count != 1:
            found.append(f"{m.name}: old text found {count} times in {FILES[m.file]}")
        missing = [t for t in m.tests if not (root / t.partition("::")[0]).is_file()]
        if missing:
            found.append(f"{m.name}: no test file {', '.join(missing)}")
    return found


def plant(m: Mutation, root: Path) -> None:
    path = root / FILES[m.file]
    text = path.read_text(encoding="utf-8")
    if text.count(m.old) != 1:
        raise SystemExit(f"{m.name}: old text not found exactly once in {path}")
    path.write_text(text.replace(m.old, m.new), encoding="utf-8")


# ---------------------------------------------------------------------- running the tests
def environment(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("BENCHPRESS_CALIBRATION_CACHE", None)  # each run computes its own (conftest)
    return env


def module_name(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def imported_from(root: Path, module: str) -> str:
    """The file Python imports `module` from in the copy's environment."""
    done = subprocess.run(
        [str(PYTHON), "-c", WHERE_FROM, module],
        cwd=root,
        env=environment(root),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["no output"]
        return f"<import failed: {lines[-1]}>"
    return done.stdout.strip()


@dataclass
class Outcome:
    name: str
    result: str  # caught, survived, timeout, error
    seconds: float
    detail: str = ""


def run_tests(
    root: Path, tests: tuple[str, ...], timeout: float, first: bool = True
) -> tuple[int | None, str]:
    """(pytest's exit code, its output); None when stopped at `timeout`. `first`: stop at
    the first failure (`-x`)."""
    args = [str(PYTHON), "-m", "pytest", "-q", "-p", "no:cacheprovider", *(["-x"] if first else [])]
    process = subprocess.Popen(
        [*args, *tests],
        cwd=root,
        env=environment(root),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own group: a timeout stops what the tests started
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        return None, output
    return process.returncode, output


def failures(output: str) -> list[str]:
    return [line[:200] for line in output.splitlines() if line.startswith(("FAILED ", "ERROR "))]


def first_failure(output: str) -> str:
    found = failures(output)
    if found:
        return found[0]
    lines = [x for x in output.strip().splitlines() if x.strip()]
    return lines[-1][:200] if lines else ""


def audit_one(m: Mutation, snapshot: Path, names: list[str], work: Path, timeout: float) -> Outcome:
    root = work / m.name
    copy_tree(snapshot, names, root)
    started = time.monotonic()
    try:
        plant(m, root)
        where = imported_from(root, module_name(FILES[m.file]))
        if not where.startswith(str(root)):
            return Outcome(m.name, "error", 0.0, f"imported {where}, not the copy's")
        code, output = run_tests(root, m.tests, timeout)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    seconds = time.monotonic() - started
    if code is None:
        return Outcome(m.name, "timeout", seconds, f"stopped after {timeout:g} s")
    if code == 0:
        return Outcome(m.name, "survived", seconds)
    if code in (1, 2):  # tests failed, or the suite failed to collect (2)
        return Outcome(m.name, "caught", seconds, first_failure(output))
    return Outcome(m.name, "error", seconds, f"pytest exit {code}: {first_failure(output)}")


def baseline(chosen: tuple[Mutation, ...], snapshot: Path, names: list[str], work: Path) -> None:
    """Every test `chosen` names, once, on the unmutated copy: they should all pass (else a
    "caught" may be a test that fails anyway)."""
    root = work / "baseline"
    copy_tree(snapshot, names, root)
    tests = tuple(dict.fromkeys(t for m in chosen for t in m.tests))
    started = time.monotonic()
    try:
        code, output = run_tests(root, tests, TIMEOUT * 4, first=False)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    lines = [x for x in output.strip().splitlines() if x.strip()]
    print(f"baseline: {len(tests)} test files or ids, {time.monotonic() - started:.0f} s")
    print(f"  {lines[-1] if lines else 'no output'} (pytest exit {code})")
    for line in failures(output):
        print(f"  {line}")


# ---------------------------------------------------------------------- the command
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", metavar="NAME", help="this mutation (repeat)")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--check", action="store_true", help="check they can be planted, exit")
    parser.add_argument("--survivors", action="store_true", help="issue 39's survivors only")
    parser.add_argument("--baseline", action="store_true", help="run the tests without bugs")
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds per mutation")
    args = parser.parse_args(argv)

    names_known = [m.name for m in MUTATIONS]
    if len(set(names_known)) != len(names_known):
        raise SystemExit("two mutations share a name")
    chosen = MUTATIONS
    if args.only:
        unknown = sorted(set(args.only) - set(names_known))
        if unknown:
            raise SystemExit(f"no mutation named {', '.join(unknown)} (--list shows them)")
        chosen = tuple(m for m in MUTATIONS if m.name in args.only)
    if args.survivors:
        chosen = tuple(m for m in chosen if m.survivor)

    if args.list:
        for m in chosen:
            mark = " (survivor in issue 39)" if m.survivor else ""
            print(f"{m.name}: {FILES.get(m.file, m.file)}{mark}\n  {m.description}")
            print(f"  tests: {' '.join(m.tests)}")
        print(f"{len(chosen)} mutations, {sum(m.survivor for m in chosen)} issue-39 survivors")
        return 0

    found = problems(chosen, REPO)
    if found:
        print("cannot plant:\n  " + "\n  ".join(found), file=sys.stderr)
        return 2
    if args.check:
        print(f"{len(chosen)} mutations can be planted in {len({m.file for m in chosen})} modules")
        return 0

    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mutation-audit-") as temporary:
        work = Path(temporary)
        names = tree_files(REPO)
        snapshot = work / "tree"
        copy_tree(REPO, names, snapshot)  # one state of the checkout for the whole audit
        print(f"working tree: {len(names)} files copied; {len(chosen)} mutations", flush=True)
        if args.baseline:
            baseline(chosen, snapshot, names, work)
            return 0
        outcomes = []
        for i, m in enumerate(chosen, start=1):
            outcome = audit_one(m, snapshot, names, work, args.timeout)
            outcomes.append(outcome)
            print(
                f"[{i:2d}/{len(chosen)}] {m.name:30s} {outcome.result:8s} "
                f"{outcome.seconds:6.0f} s  {outcome.detail}",
                flush=True,
            )

    counts = {r: [o.name for o in outcomes if o.result == r] for r in ("caught", "survived")}
    others = [o for o in outcomes if o.result not in counts]
    minutes = (time.monotonic() - began) / 60
    print(f"\ncaught {len(counts['caught'])} of {len(outcomes)} planted bugs ({minutes:.0f} min)")
    print(f"survived {len(counts['survived'])}: {', '.join(counts['survived']) or '-'}")
    if others:
        print(f"not decided {len(others)}: " + ", ".join(f"{o.name} ({o.result})" for o in others))
    revived = [m.name for m in chosen if m.survivor and m.name in counts["survived"]]
    survivors = [m for m in chosen if m.survivor]
    if survivors:
        caught = sum(1 for m in survivors if m.name in counts["caught"])
        print(f"issue-39 survivors now caught: {caught} of {len(survivors)}", end="")
        print(f" (still surviving: {', '.join(revived)})" if revived else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
