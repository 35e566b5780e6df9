"""Exit codes that tell scripts what happened: a misspelled snapshot version is a usage error
(exit 2, the canonical spelling in the message), and a refresh that could fetch no source
(publishing nothing), or (with --fail-on-stale) left any source stale, fails (exit 1, one
summary line)."""

from __future__ import annotations

import dagster as dg
import pytest

from pipelines import run as pipeline_run
from pipelines.team.postgres_local import free_port
from predictor.cli.main import main
from predictor.snapshots.reader import list_versions
from predictor.util.paths import dagster_home, snapshot_store_dir
from tests.support.mirror_server import MirrorServer, serve_status

LIVEBENCH_TABLE = "/livebench.ai/table_2026_01_08.csv"


# ------------------------------------------------------------ 1: --version, exit 2
@pytest.mark.parametrize(
    ("spelled", "canonical"),
    [
        ("٢٠٢٦.11.30.2", "2026.11.30.2"),  # Arabic-Indic digits
        ("2026.11.30.02", "2026.11.30.2"),
        ("2026.1.5.1", "2026.01.05.1"),
    ],
)
@pytest.mark.parametrize(
    "command",
    [
        ["predict", "--scores", "gpqa_diamond=80", "--version"],
        ["snapshots", "show"],
        ["snapshots", "verify"],
    ],
)
def test_a_misspelled_version_is_a_usage_error(
    command: list[str], spelled: str, canonical: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main([*command, spelled])
    err = capsys.readouterr().err
    assert stopped.value.code == 2
    last = err.strip().splitlines()[-1]  # argparse's usage, then its one error line
    assert "error: argument" in last and f"the canonical spelling is {canonical}" in last


def test_a_misspelled_pinned_version_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    pin = "2026.11.30.02@sha256:" + "0" * 64
    with pytest.raises(SystemExit) as stopped:
        main(["predict", "--scores", "gpqa_diamond=80", "--version", pin])
    assert stopped.value.code == 2
    assert "the canonical spelling is 2026.11.30.2" in capsys.readouterr().err


# ------------------------------------------------- 2: refresh outcome -> exit code
def _outcome(**states: str) -> pipeline_run.RefreshOutcome:
    return pipeline_run.RefreshOutcome(
        success=True, version="2026.11.30.1", published=False, source_outcomes=dict(states)
    )


def _fake_refresh(monkeypatch: pytest.MonkeyPatch, outcome: pipeline_run.RefreshOutcome) -> dict:
    seen: dict = {}

    def run_refresh(**kwargs):
        seen.update(kwargs)
        return pipeline_run.judge_sources(outcome, kwargs.get("fail_on_stale", False))

    monkeypatch.setattr(pipeline_run, "run_refresh", run_refresh)
    return seen


FAILED = "FETCH FAILED, keeping last good data: {}: fetching https://x.test/a failed: refused"


def test_a_stale_source_passes_without_the_flag(
    monkeypatch: pytest.MonkeyPatch, benchpress_home, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake_refresh(monkeypatch, _outcome(aider="ok", livebench=FAILED.format("livebench")))
    assert main(["refresh", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "1 source(s) stale" in err


def test_fail_on_stale_fails_on_one_stale_source(
    monkeypatch: pytest.MonkeyPatch, benchpress_home, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = _fake_refresh(monkeypatch, _outcome(aider="ok", livebench=FAILED.format("livebench")))
    assert main(["refresh", "--no-progress", "--fail-on-stale"]) == 1
    assert seen["fail_on_stale"] is True
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(
        "benchpress: error: 1 of 2 sources stale (--fail-on-stale): livebench"
    )


def test_every_source_failed_fails_with_one_line(
    monkeypatch: pytest.MonkeyPatch, benchpress_home, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake_refresh(monkeypatch, _outcome(a=FAILED.format("a"), b=FAILED.format("b")))
    assert main(["refresh", "--no-progress"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("benchpress: error: no source could be fetched")


@pytest.mark.slow
def test_a_refresh_that_fetches_nothing_fails(
    refreshed_home, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every source's mirror refuses connections (no server on its port): exit 1, one line,
    and nothing published although the old data would make a new snapshot (another fit
    setting): the blocking check `sources_fetched` stops the job before the fit."""
    store = snapshot_store_dir(refreshed_home.home)
    before = list_versions(store)
    monkeypatch.setenv("BENCHPRESS_HTTP_MIRROR", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("BENCHPRESS_SOURCE_DEADLINE", "0.5")  # no long retrying per source
    monkeypatch.setenv("BENCHPRESS_MIN_CELLS_PER_MODEL", "16")  # would publish a new version
    code = main(["refresh", "--mode", "mirror", "--no-progress"])
    out, err = capsys.readouterr()
    sources = [line for line in out.splitlines() if line.startswith("  ")]
    assert sources and all("FETCH FAILED" in line for line in sources), out + err
    assert "snapshot" not in out
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(
        f"benchpress: error: no source could be fetched ({len(sources)} of {len(sources)} failed"
    )
    assert lines[0].endswith("; nothing was published")
    assert list_versions(store) == before

    with dg.DagsterInstance.from_config(str(dagster_home(refreshed_home.home))) as instance:
        (check,) = instance.event_log_storage.get_asset_check_execution_history(
            dg.AssetCheckKey(dg.AssetKey("normalized_scores"), "sources_fetched"), limit=1
        )
        evaluation = check.event.dagster_event.event_specific_data
        assert not evaluation.passed
        assert evaluation.description.startswith(
            f"no source could be fetched: the newest fetch of each of the {len(sources)} sources "
            "failed"
        )
        fit = instance.get_latest_materialization_event(dg.AssetKey("factorization"))
        assert fit is not None and fit.run_id != check.run_id  # stopped before the fit


@pytest.mark.slow
def test_fail_on_stale_fails_a_real_refresh_with_one_stale_source(
    refreshed_home,
    mirror_server: MirrorServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("BENCHPRESS_HTTP_MIRROR", mirror_server.base_url)
    mirror_server.faults[LIVEBENCH_TABLE] = serve_status(503, b"down", {"Retry-After": "0"})
    code = main(["refresh", "--mode", "mirror", "--no-progress", "--fail-on-stale"])
    out, err = capsys.readouterr()
    assert "livebench: FETCH FAILED" in out
    assert code == 1
    assert (
        err.strip().splitlines()[-1].startswith("benchpress: error: 1 of ")
        and "stale (--fail-on-stale): livebench" in err
    )
