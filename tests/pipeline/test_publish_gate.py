"""The publish gate holds however `published_snapshot` is materialized.

- A staged snapshot records the run that staged it; each blocking check records its verdict for
  that run (and the staged content hash) in `check_results`. `published_snapshot` publishes only
  what its own run staged, and only when every blocking check of that run passed or a failed
  drift check was explicitly accepted, so materializing it on its own after a failed refresh
  publishes nothing (it used to publish the failed staging with `accepted_drift: []`).
- A truncated-but-parseable payload (Aider's YAML cut mid-number: 83.1 -> 8, one model dropped,
  every other drift figure about 0) and a source that lost rows are stopped by `cells_not_lost`;
  `--accept-drift cells_not_lost` publishes them and the manifest records the acceptance.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
import pytest

from pipelines.checks import cells_rule
from pipelines.definitions import defs
from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT
from pipelines.run import REPO_DAGSTER_YAML, run_refresh
from pipelines.settings import check_thresholds, guard_thresholds
from pipelines.stages.fit import FitResult
from pipelines.stages.quality import (
    GuardThresholds,
    cell_jumps,
    cell_move_figures,
    source_row_changes,
)
from pipelines.stages.snapshot import GATE_CHECKS, accepted_checks, gate_problems
from predictor.snapshots.reader import list_versions, read_manifest
from predictor.util.paths import snapshot_store_dir, warehouse_path
from tests.faults.refreshing import refresh_env
from warehouse.db import connect
from warehouse.snapshots import (
    CheckRecord,
    StagedRun,
    check_records,
    record_check,
    record_staging,
    staged_by,
)

REPO = Path(__file__).resolve().parents[2]
AIDER = "raw.githubusercontent.com/Aider-AI/aider/main/aider/website/_data/polyglot_leaderboard.yml"
EVALPLUS = "evalplus.github.io/results.json"
FAST_FIT = {"BENCHPRESS_MIN_CELLS_PER_MODEL": "20"}


# ---------------------------------------------------------------------------- pure decisions
def record(name: str, passed: bool = True, digest: str | None = "h1", **kw) -> CheckRecord:
    return CheckRecord(
        kw.get("run_id", "run-1"),
        name,
        "factorization",
        digest,
        passed,
        kw.get("accepted", False),
        kw.get("description", ""),
    )


def all_passed(digest: str = "h1") -> dict[str, CheckRecord]:
    return {
        name: record(
            name, digest=None if name in ("identity_resolution", "matrix_sanity") else digest
        )
        for name in GATE_CHECKS
    }


def test_gate_checks_are_the_blocking_checks_of_the_job() -> None:
    graph = defs.resolve_asset_graph()
    blocking = {
        spec.name
        for spec in (graph.get_check_spec(key) for key in graph.asset_check_keys)
        if spec.blocking
    }
    assert blocking == set(GATE_CHECKS)


def test_gate_requires_every_check_of_the_staging_run_for_that_content() -> None:
    staged = StagedRun("run-1", "h1", {}, None)
    assert gate_problems(staged, all_passed()) == []
    records = all_passed()
    del records["matrix_sanity"]
    assert gate_problems(staged, records) == ["matrix_sanity: not evaluated by run run-1"]
    records = all_passed()
    records["predictions_stable"] = record("predictions_stable", False, description="shift 9")
    assert gate_problems(staged, records) == ["predictions_stable failed: shift 9"]
    records["predictions_stable"] = record("predictions_stable", False, accepted=True)
    assert gate_problems(staged, records) == []
    assert accepted_checks(records) == ["predictions_stable"]
    # a verdict on other staged content does not count
    assert gate_problems(StagedRun("run-1", "h2", {}, None), all_passed("h1"))[0].startswith(
        "rank2_structure: judged staged snapshot h1, not h2"
    )


def test_stagings_and_verdicts_are_read_per_run(tmp_path: Path) -> None:
    with connect(tmp_path / "w.duckdb") as con:
        record_staging(con, "run-a", "ha", "ha", {"f": 1}, None, datetime(2026, 1, 1, tzinfo=UTC))
        record_staging(con, "run-b", "hb", "hb", {"f": 2}, {"against": "v1"})  # staged later
        # run A's checks read A's staging, never "the latest staged" (B's)
        assert staged_by(con, ["run-a"]).content_hash == "ha"
        assert staged_by(con, ["run-c"]) is None
        # a re-execution of A (run C, parent A) sees A's staging
        assert staged_by(con, ["run-c", "run-a"]).run_id == "run-a"
        record_check(con, record("cells_not_lost", False, "ha", run_id="run-a"))
        record_check(con, record("cells_not_lost", True, "ha", run_id="run-c"))
        record_check(con, record("rank2_structure", True, "hb", run_id="run-b"))
        assert not check_records(con, ["run-a"])["cells_not_lost"].passed
        assert check_records(con, ["run-c", "run-a"])["cells_not_lost"].passed  # nearest wins
        assert "rank2_structure" not in check_records(con, ["run-c", "run-a"])
        staged = con.execute("SELECT content_hash, run_id FROM staged_snapshots").fetchall()
        assert sorted(staged) == [("ha", "run-a"), ("hb", "run-b")]


def cells(rows: list[tuple[str, str, float]], source: str = "s") -> pl.DataFrame:
    return pl.DataFrame(
        [(m, b, v, source) for m, b, v in rows],
        schema=["model_id", "benchmark_id", "score", "source"],
        orient="row",
    )


def test_cell_jumps_use_points_on_percent_and_ratio_elsewhere() -> None:
    previous = cells([("a", "p", 83.1), ("b", "p", 50.0), ("a", "elo", 1300.0), ("b", "elo", 900)])
    current = cells([("a", "p", 8.0), ("b", "p", 60.0), ("a", "elo", 130.0), ("b", "elo", 1000)])
    jumps, per_benchmark = cell_jumps(
        previous, current, {"p": "percent", "elo": "unbounded"}, GuardThresholds()
    )
    assert sorted(jumps.select("model_id", "benchmark_id").rows()) == [("a", "elo"), ("a", "p")]
    assert per_benchmark.rows() == [("elo", 2, 2, 1), ("p", 2, 2, 1)]  # compared, changed, jumps


def test_source_rows_are_compared_with_the_parses_of_the_last_publish() -> None:
    now = pl.DataFrame(
        [("aider", 12, 166), ("evalplus", 14, 300), ("livebench", 6, 2921)],
        schema=["source", "parse_id", "n_rows"],
        orient="row",
    )
    then = {"aider": (1, 167), "evalplus": (5, 428), "livebench": (6, 2921)}
    changes = source_row_changes(now, then)
    assert set(changes) == {"aider", "evalplus"}  # livebench: the same parse
    assert changes["evalplus"]["ratio"] == round(300 / 428, 4)
    assert source_row_changes(now, None) == {}  # nothing published from this warehouse


def drift_with(moves: dict | None = None, rows: dict | None = None) -> dict:
    drift = {
        "against": "2026.11.30.1",
        "cells_removed": 0,
        "cells_removed_share": 0.0,
        "source_cell_ratio": {"aider": 0.99},
        "source_rows": rows or {},
    }
    if moves is not None:
        drift["cell_moves"] = moves
    return drift


HOSTILE = "evil|model<script>alert(1)</script>`[x](y)`"


def jump(model: str, z: float | None, suspicious: bool) -> dict:
    return {
        "model_id": model,
        "benchmark_id": "aider_polyglot_diff",
        "old": 83.1,
        "new": 8.0,
        "delta": -75.1,
        "z": z,
        "z_kind": "fold-in" if z is not None else None,
        "suspicious": suspicious,
        "old_source": "aider",
        "new_source": "aider",
    }


def moves_of(listed: list[dict], benchmarks: dict | None = None) -> dict:
    return {
        "compared": 1000,
        "jumps": len(listed),
        "suspicious": sum(c["suspicious"] for c in listed),
        "unverified": sum(c["z"] is None for c in listed),
        "thresholds": {"points": 20.0, "ratio": 0.5, "z": 3.5},
        "cells": listed,
        "benchmarks": benchmarks or {},
    }


def test_cells_rule_stops_a_single_suspicious_jump_and_lists_it_escaped() -> None:
    t = check_thresholds()
    ok, text, figures = cells_rule(drift_with(moves_of([jump(HOSTILE, -7.02, True)])), t)
    assert not ok
    assert "1 published cell(s) jumped" in text and "83.1 -> 8 (z -7.0, aider)" in text
    table = figures["jumped_cells"].value
    assert "<script>" not in table and "\\<script\\>" in table and "evil\\|model" in table
    assert table.count("\n") == 2  # header, rule, one row: no cell broke the table
    # a jump the model's other scores support, or one nothing can check, passes
    ok, text, _ = cells_rule(
        drift_with(moves_of([jump("m", 1.2, False), jump("n", None, False)])), t
    )
    assert ok and "2 of 1000 published cells jumped, 0 suspicious" in text
    # unless a whole benchmark jumped
    wide = {"aider_polyglot_diff": {"jumps": 40, "compared": 60, "share": 0.6667}}
    ok, text, _ = cells_rule(drift_with(moves_of([jump("m", 1.2, False)], wide)), t)
    assert not ok and "benchmark aider_polyglot_diff: 40 of its 60 published cells jumped" in text
    # thresholds come from the environment like every other check's
    lenient = GuardThresholds(max_suspicious_moves=1)
    assert cells_rule(drift_with(moves_of([jump("m", -7.0, True)])), t, lenient)[0]


def test_cells_rule_stops_a_source_that_lost_rows(monkeypatch) -> None:
    rows = {"evalplus": {"rows": 300, "published_rows": 428, "ratio": 0.7009}}
    ok, text, _ = cells_rule(drift_with(rows=rows), check_thresholds())
    assert not ok and "source evalplus parsed 300 rows, 30% fewer than the 428" in text
    monkeypatch.setenv("BENCHPRESS_CHECK_MAX_SOURCE_ROWS_DROP", "0.5")
    assert guard_thresholds().max_source_rows_drop == 0.5
    assert cells_rule(drift_with(rows=rows), check_thresholds())[0]


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("BENCHPRESS_CHECK_MAX_SOURCE_ROWS_DROP", "20%", "is not a number (default 0.2)"),
        ("BENCHPRESS_CHECK_MAX_SUSPICIOUS_MOVES", "1.5", "is not an integer (default 0)"),
        ("BENCHPRESS_CHECK_MIN_MODELS", "lots", "is not an integer (default 50)"),
        ("BENCHPRESS_CHECK_MAX_LOADING_ANGLE_DEG", "nan", "is not a number (default 30.0)"),
    ],
)
def test_a_bad_threshold_names_its_variable(monkeypatch, name: str, raw: str, message) -> None:
    monkeypatch.setenv(name, raw)
    with pytest.raises(ValueError, match=re.escape(f"{name}={raw!r} {message}")):
        check_thresholds(), guard_thresholds()  # each reads its own variables


def test_an_empty_threshold_variable_means_the_default(monkeypatch) -> None:
    monkeypatch.setenv("BENCHPRESS_CHECK_CELL_MOVE_Z", "")
    monkeypatch.setenv("BENCHPRESS_CHECK_MIN_BENCHMARKS", " ")
    assert guard_thresholds().cell_move_z == 3.5
    assert check_thresholds().min_benchmarks == 50


def test_factorization_is_described_as_the_method_it_runs() -> None:
    node = defs.resolve_asset_graph().get(dg.AssetKey("factorization"))
    assert "Bayesian low-rank" in node.description
    assert "ALS" not in node.description and "rank-2" not in node.description


# ------------------------------------------------------------------- whole refreshes (slow)
def truncated_aider(root: Path) -> Path:
    """The replay root with Aider's polyglot YAML cut mid-number: the 83.1 cell reads 8 and
    the last model is gone; served as fetched now."""
    shutil.copytree(DEFAULT_REPLAY_ROOT, root)
    path = root / AIDER
    head, *entries = re.split(r"(?m)^(?=- dirname:)", path.read_text("utf-8"))
    target = next(e for e in entries if "  pass_rate_2: 83.1\n" in e)
    rest = [e for e in entries if e is not target][:-1]
    path.write_text(head + "".join(rest) + target[: target.index("83.1") + 1], "utf-8")
    return _fetched_now(root, "aider", AIDER)


def fewer_evalplus_models(root: Path, keep: float = 0.7) -> Path:
    shutil.copytree(DEFAULT_REPLAY_ROOT, root)
    path = root / EVALPLUS
    doc = json.loads(path.read_text("utf-8"))
    names = list(doc)[: int(len(doc) * keep)]
    path.write_text(json.dumps({name: doc[name] for name in names}), "utf-8")
    return _fetched_now(root, "evalplus", EVALPLUS)


def _fetched_now(root: Path, source: str, rel: str) -> Path:
    index_path = root / "_sources" / f"{source}.recorded.json"
    index = json.loads(index_path.read_text())
    index.pop(rel)
    index_path.write_text(json.dumps(index))
    return root


@pytest.fixture(scope="module")
def published_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home holding one version refreshed from the recorded payloads."""
    home = tmp_path_factory.mktemp("gate") / "home"
    with pytest.MonkeyPatch.context() as env:
        for name, value in FAST_FIT.items():
            env.setenv(name, value)
        outcome = run_refresh(mode="replay", home=home)
    assert outcome.success and outcome.published, outcome
    return home


@pytest.fixture
def home(published_once: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "home"
    shutil.copytree(published_once, copy)
    monkeypatch.setenv("BENCHPRESS_HOME", str(copy))
    for name, value in FAST_FIT.items():
        monkeypatch.setenv(name, value)
    return copy


def versions(home: Path) -> list[str]:
    return list_versions(snapshot_store_dir(home))


def materialize_alone(home: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """What the operator ran: `dagster asset materialize --select published_snapshot`."""
    dagster_home = home / "dagster"
    assert (dagster_home / "dagster.yaml").read_bytes() == REPO_DAGSTER_YAML.read_bytes()
    return subprocess.run(
        [
            str(Path(sys.executable).parent / "dagster"),
            *("asset", "materialize", "-m", "pipelines.definitions"),
            *("--select", "published_snapshot"),
        ],
        cwd=REPO,
        env={**refresh_env(home, env), "DAGSTER_HOME": str(dagster_home)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def verdicts(home: Path) -> dict[str, tuple[bool, bool]]:
    """check -> (passed, accepted) of the latest staging run."""
    con = duckdb.connect(str(warehouse_path(home)), read_only=True)
    try:
        return {
            name: (passed, accepted)
            for name, passed, accepted in con.execute(
                "SELECT check_name, passed, accepted FROM check_results WHERE run_id ="
                " (SELECT run_id FROM staging_runs ORDER BY staged_at DESC LIMIT 1)"
            ).fetchall()
        }
    finally:
        con.close()


@pytest.mark.slow
def test_materializing_published_snapshot_alone_never_publishes_a_failed_staging(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = versions(home)
    env = {
        "BENCHPRESS_REPLAY_ROOT": str(truncated_aider(tmp_path / "root")),
        "BENCHPRESS_CHECK_MAX_PREDICTION_SHIFT": "-1",  # forces a failure
        **FAST_FIT,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    outcome = run_refresh(mode="replay", home=home)
    assert not outcome.success and outcome.version is None
    assert versions(home) == before
    assert verdicts(home)["predictions_stable"] == (False, False)

    done = materialize_alone(home, env)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output[-3000:]
    assert "nothing staged by run" in output
    assert "predictions_stable failed" in output and "cells_not_lost failed" in output
    assert "--accept-drift" in output  # says what the documented route is
    assert versions(home) == before  # nothing published, latest unchanged


@pytest.mark.slow
def test_a_truncated_payload_is_stopped_and_publishes_only_when_accepted(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = versions(home)
    monkeypatch.setenv("BENCHPRESS_REPLAY_ROOT", str(truncated_aider(tmp_path / "root")))
    outcome = run_refresh(mode="replay", home=home)
    assert not outcome.success and versions(home) == before
    (failed,) = outcome.failed_checks
    assert failed.startswith("factorization.cells_not_lost: ")
    assert "gemini-2.5-pro@thinking-32k on aider_polyglot_diff 83.1 -> 8 (z -6.5" in failed
    # the other drift checks saw nothing: this is what slipped through before
    assert {k: v for k, v in verdicts(home).items() if k != "cells_not_lost"} == {
        name: (True, False) for name in GATE_CHECKS if name != "cells_not_lost"
    }

    accepted = run_refresh(mode="replay", home=home, accept_drift="cells_not_lost")
    assert accepted.success and accepted.published, accepted
    manifest = read_manifest(snapshot_store_dir(home) / accepted.version)
    assert manifest["accepted_drift"] == ["cells_not_lost"]
    moves = manifest["drift"]["cell_moves"]
    assert moves["suspicious"] == 1 and moves["cells"][0]["new"] == 8.0
    assert manifest["staged_by_run"]

    again = run_refresh(mode="replay", home=home)  # the same payloads: nothing new to judge
    assert again.success and not again.published and again.version == accepted.version


@pytest.mark.slow
def test_a_source_that_lost_rows_is_stopped(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = versions(home)
    monkeypatch.setenv("BENCHPRESS_REPLAY_ROOT", str(fewer_evalplus_models(tmp_path / "root")))
    outcome = run_refresh(mode="replay", home=home)
    assert not outcome.success and versions(home) == before
    (failed,) = outcome.failed_checks
    assert re.search(
        r"source evalplus parsed \d+ rows, 3\d% fewer than the \d+ of the last", failed
    )


def test_a_jump_in_a_rescored_benchmark_is_judged_by_share_not_by_z() -> None:
    """An isolated jump the row does not support is suspect; jumps in a benchmark whose source
    re-scored it (most of its cells changed, as the Open LLM Leaderboard's MATH column did
    between its recorded 2024 and 2025 files) are not, however far from their row."""
    models = [f"m{i}" for i in range(10)]
    previous = cells([(m, "rescored", 10.0 + i) for i, m in enumerate(models)])
    previous = pl.concat([previous, cells([(m, "steady", 50.0) for m in models])])
    current = cells([(m, "rescored", 11.0 + i) for i, m in enumerate(models)])
    current = current.with_columns(
        pl.when(pl.col("model_id") == "m0").then(60.0).otherwise(pl.col("score")).alias("score")
    )
    current = pl.concat(
        [current, cells([(m, "steady", 8.0 if m == "m1" else 50.0) for m in models])]
    )
    residuals = pl.DataFrame(
        {"model_id": ["m0", "m1"], "benchmark_id": ["rescored", "steady"], "z": [6.0, -7.0]}
    )
    fit = FitResult(models, ["rescored", "steady"], ["percent"] * 2, None, None, {})  # type: ignore[arg-type]
    scale_of = {"rescored": "percent", "steady": "percent"}
    moves = cell_move_figures(previous, current, residuals, fit, scale_of, GuardThresholds())
    assert moves["jumps"] == 2 and moves["suspicious"] == 1
    assert moves["rescored_benchmarks"] == ["rescored"]
    first = moves["cells"][0]
    assert (first["model_id"], first["benchmark_id"], first["suspicious"]) == ("m1", "steady", True)
    assert first["z_kind"] == "leave-one-out" and first["old"] == 50.0 and first["new"] == 8.0
    assert moves["benchmarks"]["rescored"] == {
        "jumps": 1,
        "changed": 10,
        "compared": 10,
        "share": 0.1,
    }
