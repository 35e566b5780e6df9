"""Epoch AI benchmark_data.zip: the recorded export via the loopback mirror, and hostile ZIPs."""

from __future__ import annotations

import io
import json
import zipfile

import polars as pl
import pytest

from pipelines.sources import epoch_ai
from pipelines.sources.base import SCORE_SCHEMA, ParseError
from tests.support.fault_edits import EPOCH_MEMBER, Target, epoch_edit
from tests.support.fetching import fetch_via_mirror

# where the fault suite's content faults go (tests/faults/faults.py collects it)
FAULT_TARGET = Target(epoch_ai.SOURCE.urls[0], epoch_edit, f"member {EPOCH_MEMBER}")
URL = epoch_ai.URL
HEADER = "Model version,Score,Release date,Organization,Country,Training compute (FLOP),Notes\n"


@pytest.fixture(scope="module")
def real_zip() -> bytes:
    from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, replay_relpath

    return (DEFAULT_REPLAY_ROOT / replay_relpath(URL)).read_bytes()


@pytest.fixture(scope="module")
def frame(real_zip: bytes) -> pl.DataFrame:
    return epoch_ai.parse({URL: real_zip})


def _zip(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _row(frame: pl.DataFrame, bench: str, key: str | None, agent: str | None = None) -> dict:
    sel = frame.filter(pl.col("benchmark_key") == bench)
    sel = sel.filter(pl.col("model_key").is_null() if key is None else pl.col("model_key") == key)
    if agent is not None:
        sel = sel.filter(pl.col("agent") == agent)
    assert sel.height == 1, sel
    return sel.row(0, named=True)


def test_fetch_through_mirror_and_parse(mirror_server, real_zip: bytes) -> None:
    payloads = fetch_via_mirror(epoch_ai.SOURCE, mirror_server.base_url)
    assert payloads == {URL: real_zip}
    frame = epoch_ai.parse(payloads)
    assert frame.schema == pl.Schema(SCORE_SCHEMA)
    assert frame.height == 3690


def test_counts(frame: pl.DataFrame) -> None:
    assert frame.height == 3690  # one row per CSV data row: 3,192 benchmark rows + 498 ECI rows
    assert frame["model_key"].drop_nulls().n_unique() == 498
    assert frame["benchmark_key"].n_unique() == 45  # 44 benchmark files + eci
    assert frame.filter(pl.col("benchmark_key") == "gpqa_diamond").height == 145
    assert frame.filter(pl.col("benchmark_key") == "arc_agi_external").height == 61
    eci = frame.filter(pl.col("benchmark_key") == "eci")
    assert eci.height == 498 and eci["value"].null_count() == 216
    # + 4 rows whose Name is another system, 1 incomplete run (test_epoch_name_checks.py)
    assert frame["value"].null_count() == 661
    assert frame["source"].unique().to_list() == ["epoch_ai"]
    assert frame["payload_url"].unique().to_list() == [URL]
    # README.md and additional_eci_data/* are not benchmarks
    assert not frame.filter(pl.col("row_ref").str.contains("additional_eci|README")).height


def test_units_per_file(frame: pl.DataFrame) -> None:
    units = dict(frame.group_by("unit").len().iter_rows())
    assert units == {
        "fraction": 2861,
        "percent": 187,
        "index": 498,
        "points": 32,
        "score": 46,
        "minutes": 33,
        "elo": 33,
    }
    by_bench = dict(frame.select("benchmark_key", "unit").unique().iter_rows())
    assert by_bench["aider_polyglot_external"] == "percent"
    assert by_bench["live_bench_external"] == "percent"
    assert by_bench["os_world_external"] == "percent"
    assert by_bench["webdev_arena_external"] == "elo"
    assert by_bench["geobench_external"] == "points"
    assert by_bench["metr_time_horizons_external"] == "minutes"
    assert by_bench["lech_mazur_writing_external"] == "score"
    assert by_bench["eci"] == "index"
    assert by_bench["swe_bench_bash"] == "fraction"  # "% Resolved" is 0-1 despite the name
    fractions = frame.filter(pl.col("unit") == "fraction")["value"].drop_nulls()
    assert fractions.min() >= 0.0 and fractions.max() <= 1.0
    percents = frame.filter(pl.col("unit") == "percent")["value"].drop_nulls()
    assert percents.max() == 88.0 and percents.min() == 3.6


def test_exact_values(frame: pl.DataFrame) -> None:
    gpqa = _row(frame, "gpqa_diamond", "gemini-3-flash-preview")
    assert gpqa["value"] == 0.8320707070707071
    assert gpqa["row_ref"] == "gpqa_diamond.csv line 2"
    extra = json.loads(gpqa["extra"])
    assert extra["stderr"] == 0.019036353018587762
    assert extra["score_column"] == "mean_score"
    assert extra["organization"] == "Google DeepMind"
    assert extra["release_date"] == "2025-12-17"

    aider = _row(frame, "aider_polyglot_external", "gpt-5-2025-08-07_high")
    assert (aider["value"], aider["unit"], aider["agent"]) == (88.0, "percent", "diff")
    assert json.loads(aider["extra"])["cost"] == 0.13

    arena = _row(frame, "webdev_arena_external", "claude-opus-4-5-20251101_32K")
    assert arena["value"] == 1512.0
    assert json.loads(arena["extra"])["votes"] == 4564.0

    metr = _row(frame, "metr_time_horizons_external", "claude-opus-4-5-20251101_16K")
    assert metr["value"] == 288.904952
    assert json.loads(metr["extra"])["ci_high"] == 1225.190511

    eci = _row(frame, "eci", "gpt-5.2-pro-2025-12-11-webapp")
    assert eci["value"] == 152.4182891569458
    assert eci["model_name"] == "GPT-5.2 (Pro)"

    geo = _row(frame, "geobench_external", "gemini-3-flash-preview")
    assert (geo["value"], geo["agent"]) == (4333.0, None)  # Tools=None is no agent


def test_settings_columns(frame: pl.DataFrame) -> None:
    # terminalbench: several rows per model, one per agent; padded agent names are stripped
    tb = frame.filter(
        (pl.col("benchmark_key") == "terminalbench_external")
        & (pl.col("model_key") == "gpt-5.2-2025-12-11_medium")
    )
    assert dict(tb.select("agent", "value").iter_rows()) == {"Droid": 0.649, "Codex CLI": 0.629}
    assert _row(frame, "terminalbench_external", "gpt-5.2-2025-12-11_medium", "Droid")[
        "row_ref"
    ] == ("terminalbench_external.csv line 2")
    assert frame.filter(pl.col("agent") == "Terminus 2").height == 22
    assert frame.filter(pl.col("benchmark_key") == "gso_external")["agent"].unique().to_list() == [
        "OpenHands"
    ]
    assert frame["reasoning_effort"].null_count() == frame.height  # encoded in names only
    assert frame["thinking_budget"].null_count() == frame.height


def test_empty_model_version_kept_as_rejected(frame: pl.DataFrame) -> None:
    empty = frame.filter(pl.col("model_key").is_null())
    assert empty.height == 421
    assert empty["value"].null_count() == 421
    mixed = empty.filter(pl.col("row_ref") == "aider_polyglot_external.csv line 21").row(
        0, named=True
    )
    extra = json.loads(mixed["extra"])
    assert extra["rejected"] == "empty Model version"
    assert extra["published_value"] == "78.2"
    assert mixed["agent"] == "architect"
    xverse = empty.filter(pl.col("model_name") == "XVerse")
    assert xverse.height >= 1 and xverse["benchmark_key"][0] == "bool_q_external"


def test_blank_score_kept_as_rejected(frame: pl.DataFrame) -> None:
    blank = frame.filter(
        pl.col("extra").str.json_path_match("$.rejected").str.starts_with("blank ")
    )
    assert blank.height == 216 + 19  # ECI Score, Fiction.LiveBench 120k
    # the three other files with blank scores have them only on rows without a model key
    assert set(blank["benchmark_key"].unique()) == {"eci", "fictionlivebench_external"}


def test_multiline_quoted_cells_give_start_line(frame: pl.DataFrame) -> None:
    row = _row(frame, "aider_polyglot_external", "gpt-5-2025-08-07_medium")
    assert row["row_ref"] == "aider_polyglot_external.csv line 5"


def test_ragged_row_kept_with_reason() -> None:
    csv_text = HEADER + "m1,0.5,2025-01-01,Org,US,,\nm2,0.6,extra,,,,,,\n"
    out = epoch_ai.parse({URL: _zip({"gpqa_diamond.csv": csv_text.encode()})})
    assert out.height == 2
    ragged = out.filter(pl.col("model_key") == "m2").row(0, named=True)
    assert ragged["value"] is None
    assert json.loads(ragged["extra"])["rejected"].startswith("ragged row")


def test_unknown_file_is_kept_but_rejected() -> None:
    csv_text = HEADER + "m1,0.5,,,,,\n"
    out = epoch_ai.parse({URL: _zip({"brand_new_external.csv": csv_text.encode()})})
    row = out.row(0, named=True)
    assert row["value"] is None and "no unit known" in json.loads(row["extra"])["rejected"]


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ({"../evil.csv": HEADER.encode()}, "unsafe member path"),
        ({"/abs.csv": HEADER.encode()}, "unsafe member path"),
        ({"gpqa_diamond.csv": HEADER.encode() + b"\0" * 2_000_000}, "compression ratio"),
        ({f"f{i}.csv": b"x" for i in range(501)}, "501 members"),
        ({"gpqa_diamond.csv": HEADER.encode() + b"m1,\xff\xfe,,,,,\n"}, "not UTF-8"),
        ({"gpqa_diamond.csv": b"<!DOCTYPE html><html></html>"}, "HTML page"),
        ({"gpqa_diamond.csv": b"Model,Score\nm1,0.5\n"}, "missing column 'Model version'"),
        ({"gpqa_diamond.csv": HEADER.encode() + b"m1,nan,,,,,\n"}, "non-finite"),
        ({"gpqa_diamond.csv": HEADER.encode() + b"m1,abc,,,,,\n"}, "not a number"),
        ({"gpqa_diamond.csv": HEADER.encode() + b"m1,1.5,,,,,\n"}, "outside fraction range"),
        ({"aider_polyglot_external.csv": HEADER.encode() + b"m1,101,,,,,\n"}, "percent range"),
        ({"README.md": b"# nothing"}, "no benchmark CSV"),
    ],
)
def test_hostile_archives(members: dict[str, bytes], message: str) -> None:
    with pytest.raises(ParseError, match=message) as info:
        epoch_ai.parse({URL: _zip(members)})
    assert str(info.value).startswith("epoch_ai: ")


def test_hostile_errors_name_member_and_row() -> None:
    bad = HEADER.encode() + b"m1,0.5,,,,,\nm2,1.5,,,,,\n"
    with pytest.raises(ParseError, match=r"gpqa_diamond\.csv line 3"):
        epoch_ai.parse({URL: _zip({"gpqa_diamond.csv": bad})})
    with pytest.raises(ParseError, match=r"member '\.\./evil\.csv'"):
        epoch_ai.parse({URL: _zip({"../evil.csv": b"x"})})


def test_not_a_zip_and_truncated(real_zip: bytes) -> None:
    with pytest.raises(ParseError, match="not a ZIP archive"):
        epoch_ai.parse({URL: b"<!DOCTYPE html><html>oops</html>"})
    with pytest.raises(ParseError, match="epoch_ai"):
        epoch_ai.parse({URL: real_zip[: len(real_zip) // 2]})
    with pytest.raises(ParseError, match="payload missing"):
        epoch_ai.parse({})


def test_corrupt_member_names_member() -> None:
    data = bytearray(
        _zip({"gpqa_diamond.csv": HEADER.encode() + b"m1,0.5,,,,,\n"}, zipfile.ZIP_STORED)
    )
    at = bytes(data).index(b"m1,0.5")
    data[at] = ord("X")  # CRC no longer matches
    with pytest.raises(ParseError, match=r"member 'gpqa_diamond\.csv'.*unreadable"):
        epoch_ai.parse({URL: bytes(data)})
