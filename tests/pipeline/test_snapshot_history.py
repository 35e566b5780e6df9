"""History and drift: ingest the older recorded payloads, then the newer ones; publish two
versions; a shrunken source is stopped by the blocking drift checks; pinned versions keep
answering the same."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime

import duckdb
import pytest

from pipelines.run import run_refresh
from pipelines.settings import fit_params
from pipelines.sources import SOURCES
from pipelines.stages.rebuild import rebuild_as_of
from predictor import BenchPress
from predictor.cli.snapshots import snapshot_diff
from predictor.snapshots.reader import list_versions, manifest_digest, read_manifest, verify
from predictor.util.paths import snapshot_store_dir, warehouse_path
from tests.support.replay_roots import older_replay_root
from warehouse.scores import current_parses

pytestmark = pytest.mark.slow
PROBES = {"gpqa_diamond": 70.0, "mmlu_pro": 78.0, "hle": 12.0}


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """Two refreshes: older payloads (v1), then the bundled newer ones (v2)."""
    base = tmp_path_factory.mktemp("history")
    home = base / "home"
    old_root = older_replay_root(base / "older_root")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BENCHPRESS_REPLAY_ROOT", str(old_root))
        first = run_refresh(mode="replay", home=home)
    v1_predictions = BenchPress.load(first.version, store=snapshot_store_dir(home)).predict(PROBES)
    second = run_refresh(mode="replay", home=home)
    return home, base, first, second, v1_predictions


def test_two_versions_with_parent_and_history(history) -> None:
    home, _, first, second, _ = history
    assert first.success and first.published, first
    assert second.success and second.published, second
    store = snapshot_store_dir(home)
    assert list_versions(store) == [first.version, second.version]
    manifest = read_manifest(store / second.version)
    assert manifest["parent"] == first.version
    # each version's manifest digest: in its digest file and in the store's index
    digests = {v: manifest_digest(read_manifest(store / v)) for v in list_versions(store)}
    for version, digest in digests.items():
        assert (store / version / "digest").read_text() == digest + "\n"
    assert json.loads((store / "index.json").read_text())["digests"] == digests
    assert manifest["drift"]["against"] == first.version
    # the newer payloads dropped a few entries (llm-stats deepseek-r1 rows, ARC o1 variants)
    assert 0 < manifest["drift"]["cells_removed_share"] < 0.01

    con = duckdb.connect(str(warehouse_path(home)), read_only=True)
    try:
        parses = dict(con.execute("SELECT source, count(*) FROM parses GROUP BY 1").fetchall())
        dates = dict(
            con.execute(
                "SELECT source, strftime(fetched_at, '%Y-%m-%d') FROM parses"
                " QUALIFY row_number() OVER (PARTITION BY source ORDER BY fetched_at DESC) = 1"
            ).fetchall()
        )
    finally:
        con.close()
    # sources with an older recording at the same URL were parsed twice (history kept), every
    # other source once (LMArena's older file has another name: lmsys.csv, so it is not
    # replayed)
    older = {
        "aider",
        "arc_prize",
        "evalplus",
        "livebench",
        "llm_stats",
        "open_llm_leaderboard",
        "swebench",
    }
    assert {s for s, n in parses.items() if n == 2} == older
    assert {s for s, n in parses.items() if n == 1} == set(SOURCES) - older
    # current values come from the newest payloads
    assert dates["livebench"] == "2026-07-01" and dates["evalplus"] == "2024-12-26"

    v1 = BenchPress.load(first.version, store=store).scores()
    v2 = BenchPress.load(second.version, store=store).scores()
    livebench_dates = lambda frame: set(  # noqa: E731
        frame.filter(frame["source"] == "livebench")["fetched_at"].dt.strftime("%Y-%m-%d")
    )
    assert livebench_dates(v1) == {"2026-06-17"}
    assert livebench_dates(v2) == {"2026-07-01"}


def test_diff_reports_changes_and_drift(history) -> None:
    home, _, first, second, _ = history
    store = snapshot_store_dir(home)
    diff = snapshot_diff(
        BenchPress.load(first.version, store=store), BenchPress.load(second.version, store=store)
    )
    drift = diff["drift"]
    assert (diff["from"], diff["to"]) == (first.version, second.version)
    assert drift["loading_angles_deg"][0] < 5.0
    assert drift["prediction_shift"]["median"] < 2.0  # 3 months of payloads, new first-seen dates
    assert (
        0
        < drift["cells_removed"]
        < 0.01 * BenchPress.load(first.version, store=store).scores().height
    )
    assert drift["cells_added"] > 0 and drift["cells_changed"] > 0
    assert set(drift["source_cell_ratio"]) >= {"benchpress_matrix", "livebench"}


def test_rebuild_as_of_uses_the_parses_current_then(history) -> None:
    home, base, _, second, _ = history
    con = duckdb.connect(str(warehouse_path(home)))
    try:
        early = current_parses(con, datetime(2025, 1, 1, tzinfo=UTC))
        assert set(early["source"]) == {"evalplus", "open_llm_leaderboard"}
        today = datetime(2026, 12, 1, tzinfo=UTC)
        digest, path = rebuild_as_of(con, today, base / "rebuilt", fit_params())
    finally:
        con.close()
    assert digest == read_manifest(snapshot_store_dir(home) / second.version)["content_hash"]
    assert BenchPress.from_pretrained(str(path)).predict(PROBES).keys()


def test_rebuild_too_early_says_what_the_warehouse_held_then(history) -> None:
    home, base, *_ = history
    con = duckdb.connect(str(warehouse_path(home)))
    try:
        with pytest.raises(ValueError) as caught:
            rebuild_as_of(con, datetime(2025, 1, 1, tzinfo=UTC), base / "too-early", fit_params())
    finally:
        con.close()
    message = str(caught.value)
    assert message.startswith("no model/benchmark meets the minimum observation counts")
    assert "as of 2025-01-01 the warehouse held" in message
    assert "2 source(s) (evalplus, open_llm_leaderboard)" in message
    assert "(the fit needs 15)" in message and "try a later --as-of" in message
    assert not (base / "too-early").exists()


def test_shrunken_source_is_blocked_and_latest_stays(history, monkeypatch) -> None:
    home, base, _, second, v1_predictions = history
    broken = base / "broken_root"
    shutil.copytree(base / "older_root", broken, dirs_exist_ok=False)
    shutil.copytree(
        older_replay_root.__globals__["DEFAULT_REPLAY_ROOT"], broken, dirs_exist_ok=True
    )
    (broken / "_sources" / "livebench.recorded.json").unlink()  # served as fetched now
    table = broken / "livebench.ai" / "table_2026_01_08.csv"
    table.write_bytes(b"".join(table.read_bytes().splitlines(keepends=True)[:20]))
    monkeypatch.setenv("BENCHPRESS_REPLAY_ROOT", str(broken))

    outcome = run_refresh(mode="replay", home=home)

    assert not outcome.success and outcome.version is None
    failed = "\n".join(outcome.failed_checks)
    assert "factorization.cells_not_lost" in failed
    assert "source livebench keeps" in failed
    assert "(< 50%, BENCHPRESS_CHECK_MIN_SOURCE_CELL_RATIO)" in failed  # names its setting
    store = snapshot_store_dir(home)
    assert list_versions(store)[-1] == second.version
    verify(store / second.version)
    # a consumer pinned to the first version (and its manifest) still gets the same answers
    v1 = list_versions(store)[0]
    pin = f"{v1}@{manifest_digest(read_manifest(store / v1))}"
    assert BenchPress.load(pin, store=store).predict(PROBES) == v1_predictions

    accepted = run_refresh(mode="replay", home=home, accept_drift="all")
    assert accepted.success and accepted.published
    manifest = read_manifest(store / accepted.version)
    assert "cells_not_lost" in manifest["accepted_drift"]
