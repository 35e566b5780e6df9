"""Strings from a snapshot never reach the terminal raw: a model id holding `ESC [2J` (clear the
screen), an OSC title sequence, a C1 CSI or a bidi override prints as visible escape text in
every table and message of `benchpress`, the pipeline's and the warehouse's commands included.

The hostile snapshot is real: the bundled snapshot's tables with one model and one benchmark
renamed, staged and published with the writer (`warehouse.snapshots.stage` / `publish`) into a
store whose directory name is hostile too."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from predictor.cli import main
from predictor.snapshots.reader import list_versions, load_snapshot
from predictor.util.paths import bundled_snapshot_dir
from predictor.util.text_safety import SafeStream, printable, terminal_safe_output
from warehouse.snapshots import SnapshotTables, publish, stage

BIN = Path(sys.executable).parent / "benchpress"
# the bundled snapshot's most suspicious cell: LiveBench's 0.0 for gpt-5.5@medium
OLD_MODEL, OLD_BENCH = "gpt-5.5@medium", "livebench_olympiad"
MODEL = "gpt-5.4\x1b[2J\u202eevil"  # clear screen, then right-to-left override
BENCH = "omnidoc\x1b]0;pwned\x07\u2066bench"  # set the window title (OSC ... BEL), an isolate
MODEL_NAME = "GPT\x9b2J\x85Five"  # C1: single-byte CSI, next line
SHOWN_MODEL = "gpt-5.4\\x1b[2J\\u202eevil"
SHOWN_BENCH = "omnidoc\\x1b]0;pwned\\x07\\u2066bench"
STORE_DIR = "store\x1b[31m"
# anything a terminal would obey: C0 (newline aside), DEL, C1, bidi embeddings/overrides/isolates
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
PROBES = "gpqa_diamond=80,mmlu_pro=75,hle=20"


def _renamed(value: Any, names: dict[str, str]) -> Any:
    """`value` (fit.json's tree) with every string equal to an old id replaced."""
    if isinstance(value, dict):
        return {names.get(k, k): _renamed(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, names) for v in value]
    return names.get(value, value) if isinstance(value, str) else value


def _rename_column(frame: pl.DataFrame, column: str, names: dict[str, str]) -> pl.DataFrame:
    if column not in frame.columns:
        return frame
    return frame.with_columns(pl.col(column).replace(names))


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A store holding the bundled content (version `old`) and, published after it, the same
    tables with MODEL and BENCH in place of OLD_MODEL and OLD_BENCH (version `new`)."""
    root = tmp_path_factory.mktemp("hostile")
    store = root / STORE_DIR
    bundled = bundled_snapshot_dir()
    snap = load_snapshot(bundled / list_versions(bundled)[-1])
    facts = {k: v for k, v in snap.manifest.items() if k in ("counts", "fit_params", "quality")}
    plain = SnapshotTables(
        snap.cells,
        snap.models,
        snap.benchmarks,
        snap.aliases,
        snap.conflicts,
        snap.fit,
        snap.residuals,
    )
    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    old = publish(stage(plain, root / "staging", facts)[1], store, today=yesterday).version

    names = {OLD_MODEL: MODEL, OLD_BENCH: BENCH}
    models = _rename_column(snap.models, "model_id", names).with_columns(
        pl.when(pl.col("model_id") == MODEL)
        .then(pl.lit(MODEL_NAME))
        .otherwise(pl.col("name"))
        .alias("name")
    )
    tables = SnapshotTables(
        _rename_column(_rename_column(snap.cells, "model_id", names), "benchmark_id", names),
        models,
        _rename_column(snap.benchmarks, "benchmark_id", names),
        _rename_column(snap.aliases, "id", names),
        _rename_column(_rename_column(snap.conflicts, "model_id", names), "benchmark_id", names),
        _renamed(snap.fit, names),
        _rename_column(_rename_column(snap.residuals, "model_id", names), "benchmark_id", names),
    )
    new = publish(stage(tables, root / "staging", facts)[1], store).version
    assert old != new
    return {"store": str(store), "old": old, "new": new}


@pytest.fixture(autouse=True)
def _home(benchpress_home: Path) -> Path:  # never the developer's own state
    return benchpress_home


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """Exit code and everything printed (stdout, then stderr)."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def assert_safe(text: str) -> None:
    raw = sorted({f"U+{ord(c):04X}" for c in RAW_CONTROL.findall(text)})
    assert not raw, f"raw control characters reach the terminal: {raw}"


def test_suspicious_prints_the_hostile_ids_escaped(capsys, hostile) -> None:
    code, out = cli(capsys, "suspicious", "--store", hostile["store"], "--version", hostile["new"])
    assert code == 0, out
    assert_safe(out)
    line = next(line for line in out.splitlines() if line.startswith(SHOWN_MODEL))
    assert line.split()[:2] == [SHOWN_MODEL, SHOWN_BENCH]  # one cell each, columns aligned


def test_snapshots_diff_names_added_and_removed_models_escaped(capsys, hostile) -> None:
    code, out = cli(
        capsys, "snapshots", "diff", hostile["old"], hostile["new"], "--store", hostile["store"]
    )
    assert code == 0, out
    assert_safe(out)
    assert f"  models added: 1: {SHOWN_MODEL}\n" in out
    assert f"  models removed: 1: {OLD_MODEL}\n" in out
    assert f"  benchmarks added: 1: {SHOWN_BENCH}\n" in out


def test_predict_table_escapes_a_hostile_benchmark_id(capsys, hostile) -> None:
    code, out = cli(
        capsys, "predict", "--store", hostile["store"], "--version", hostile["new"],
        "--scores", PROBES,
    )  # fmt: skip
    assert code == 0, out
    assert_safe(out)
    row = next(line for line in out.splitlines() if line.startswith(SHOWN_BENCH))
    assert row.split()[-1] == "predicted"


def test_compare_against_a_hostile_reference_model(capsys, hostile) -> None:
    code, out = cli(
        capsys, "compare", "--store", hostile["store"], "--version", hostile["new"],
        "--model", PROBES, "--reference", MODEL,
    )  # fmt: skip
    assert code == 0, out
    assert_safe(out)
    assert SHOWN_MODEL in out


def test_an_error_suggesting_a_hostile_name_is_escaped(capsys, hostile) -> None:
    code, out = cli(
        capsys, "compare", "--store", hostile["store"], "--version", hostile["new"],
        "--model", PROBES, "--reference", "gpt-5.4-evil",
    )  # fmt: skip
    assert code == 2
    assert_safe(out)
    assert out.startswith("benchpress: error: ") and out.count("\n") == 1
    assert SHOWN_MODEL in out  # the close match, visible as what it is


def test_snapshots_list_escapes_the_store_path(capsys, hostile) -> None:
    code, out = cli(capsys, "snapshots", "list", "--store", hostile["store"])
    assert code == 0, out
    assert_safe(out)
    rows = [line for line in out.splitlines()[1:] if line]
    assert [row.split()[0] for row in rows] == [hostile["old"], hostile["new"]]
    assert all(row.rstrip().endswith("store\\x1b[31m") for row in rows)


def test_json_escapes_and_csv_into_a_pipe_keeps_the_exact_id(capsys, hostile) -> None:
    """Machine formats stay data: JSON's own escapes, CSV byte for byte (not a terminal)."""
    args = ["suspicious", "--store", hostile["store"], "--version", hostile["new"]]
    code, out = cli(capsys, *args, "--json")
    assert code == 0 and "\\u001b[2J" in out
    assert_safe(out)
    assert MODEL in [row["model_id"] for row in json.loads(out)["rows"]]
    code, out = cli(capsys, *args, "--csv")
    assert code == 0
    assert MODEL in pl.read_csv(io.StringIO(out))["model_id"].to_list()


def test_warehouse_and_pipeline_messages_are_escaped_too(capsys, tmp_path) -> None:
    """`warehouse stats` quotes a stale source's stored fetch error (a payload's URL)."""
    from warehouse.db import connect
    from warehouse.payloads import log_fetch

    home = Path(os.environ["BENCHPRESS_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    with connect(home / "warehouse.duckdb") as con:
        error = "evalplus: fetching https://x.org/\x1b[2J\u202e.json failed: HTTP 404"
        log_fetch(con, "evalplus", datetime.now(UTC), "failed", error=error)
    code, out = cli(capsys, "warehouse", "stats")
    assert code == 0, out
    assert_safe(out)
    shown = "evalplus: fetching https://x.org/\\x1b[2J\\u202e.json failed: HTTP 404\n"
    stale = next(line for line in out.splitlines(True) if line.startswith("evalplus is stale"))
    assert stale.endswith(shown)


def test_the_installed_command_escapes_what_it_prints(hostile, tmp_path) -> None:
    """The `benchpress` script itself (a real process, pipes): the same guarantee."""
    done = subprocess.run(
        [str(BIN), "snapshots", "diff", hostile["old"], hostile["new"], "--store",
         hostile["store"]],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "BENCHPRESS_HOME": str(tmp_path / "home")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert_safe(done.stdout + done.stderr)
    assert SHOWN_MODEL in done.stdout


def test_safe_stream_escapes_all_but_newlines_and_tells_the_truth_about_the_terminal() -> None:
    raw = io.StringIO()
    stream = SafeStream(raw)
    stream.write("a\x1b[2J\tb\r\n\u202ec\x7f\x9b\n")
    assert raw.getvalue() == "a\\x1b[2J\\tb\\r\n\\u202ec\\x7f\\x9b\n"
    assert stream.isatty() is False and stream.getvalue() == raw.getvalue()
    assert printable("x\ny\u2069") == "x\\ny\\u2069"
    before = sys.stdout, sys.stderr
    with terminal_safe_output():
        assert isinstance(sys.stdout, SafeStream) and isinstance(sys.stderr, SafeStream)
    assert (sys.stdout, sys.stderr) == before
