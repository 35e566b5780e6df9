"""Epoch AI Benchmarking Hub: a ZIP export of one CSV per benchmark plus the ECI file.

Every benchmark CSV starts with `Model version`, then the headline score column (possibly after a
setting column such as `Agent`, `Scaffold` or `Tools`), then shared metadata and file-specific
columns. Scales differ per file (SOURCE.md, "Scales"), so each file is mapped to its unit here and
its values are range-checked against it. One output row per CSV data row.

Many files list a model several times (results from several papers, dates or runs): all rows
are kept, and the rows sharing a model, setting and benchmark name each other in
`extra["same_key_rows"]`, so the matrix's choice among them leaves the others named.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
import zlib
from collections.abc import Mapping

import polars as pl

from pipelines.sources.base import (
    ParseError,
    Source,
    decode_text,
    extra_json,
    finite_value,
    mark_repeated_keys,
    scores_frame,
)

SOURCE_ID = "epoch_ai"
URL = "https://epoch.ai/data/benchmark_data.zip"

ECI_MEMBER = "epoch_capabilities_index.csv"
MAX_MEMBERS = 500
MAX_TOTAL_BYTES = 64 * 1024 * 1024
MAX_MEMBER_BYTES = 32 * 1024 * 1024
MAX_RATIO = 200

# Columns that sit between `Model version` and the score and describe the setting, not a score.
SETTING_COLUMNS = {"Tools", "Scaffold", "Agent"}
# Metadata columns: when one of them follows `Model version` (and the settings), the score column
# is missing; taking it as the score would read e.g. the best-of-scorers figure or a date.
NOT_A_SCORE = {
    "Best score (across scorers)",
    "Release date",
    "Organization",
    "Country",
    "Training compute (FLOP)",
    "Training compute notes",
    "stderr",
    "Log viewer",
    "Logs",
    "Started at",
    "id",
    "Name",
    "Display name",
    "Model name",
}
# Columns that name the scaffold / harness / edit format (wherever they sit in the header).
AGENT_COLUMNS = ("Agent", "Scaffold", "Edit format", "Tools")
NOT_AN_AGENT = {"", "none", "true", "false"}

# benchmark key (file stem, ECI file -> "eci") -> (unit, human name). Units per SOURCE.md,
# checked against the value ranges of the 2026-01-17 export.
BENCHMARKS: dict[str, tuple[str, str]] = {
    "eci": ("index", "Epoch Capabilities Index"),
    "adversarial_nli_external": ("fraction", "Adversarial NLI"),
    "aider_polyglot_external": ("percent", "Aider Polyglot"),
    "arc_agi_external": ("fraction", "ARC-AGI"),
    "arc_ai2_external": ("fraction", "ARC (AI2) Challenge"),
    "balrog_external": ("fraction", "BALROG"),
    "bbh_external": ("fraction", "BIG-Bench Hard"),
    "bool_q_external": ("fraction", "BoolQ"),
    "cad_eval_external": ("fraction", "CadEval"),
    "chess_puzzles": ("fraction", "Chess Puzzles"),
    "common_sense_qa_2_external": ("fraction", "CommonsenseQA 2"),
    "cybench_external": ("fraction", "Cybench"),
    "deepresearchbench_external": ("fraction", "DeepResearch Bench"),
    "fictionlivebench_external": ("fraction", "Fiction.LiveBench (120k tokens)"),
    "frontiermath": ("fraction", "FrontierMath (Tiers 1-3)"),
    "frontiermath_tier_4": ("fraction", "FrontierMath Tier 4"),
    "geobench_external": ("points", "GeoBench (ACW average score)"),
    "gpqa_diamond": ("fraction", "GPQA Diamond"),
    "gsm8k_external": ("fraction", "GSM8K"),
    "gso_external": ("fraction", "GSO (OPT@1)"),
    "hella_swag_external": ("fraction", "HellaSwag"),
    "lambada_external": ("fraction", "LAMBADA"),
    "lech_mazur_writing_external": ("score", "Lech Mazur Creative Writing"),
    "live_bench_external": ("percent", "LiveBench (global average)"),
    "math_level_5": ("fraction", "MATH Level 5"),
    "metr_time_horizons_external": ("minutes", "METR Time Horizon"),
    "mmlu_external": ("fraction", "MMLU"),
    "open_book_qa_external": ("fraction", "OpenBookQA"),
    "os_world_external": ("percent", "OSWorld"),
    "otis_mock_aime_2024_2025": ("fraction", "OTIS Mock AIME 2024-2025"),
    "piqa_external": ("fraction", "PIQA"),
    "science_qa_external": ("fraction", "ScienceQA"),
    "simplebench_external": ("fraction", "SimpleBench"),
    "simpleqa_verified": ("fraction", "SimpleQA Verified"),
    "superglue_external": ("fraction", "SuperGLUE"),
    "swe_bench_bash": ("fraction", "SWE-bench Verified (bash only)"),
    "swe_bench_verified": ("fraction", "SWE-bench Verified"),
    "terminalbench_external": ("fraction", "Terminal-Bench"),
    "the_agent_company_external": ("fraction", "TheAgentCompany"),
    "trivia_qa_external": ("fraction", "TriviaQA"),
    "video_mme_external": ("fraction", "Video-MME (no subtitles)"),
    "vpct_external": ("fraction", "VPCT"),
    "webdev_arena_external": ("elo", "WebDev Arena"),
    "weirdml_external": ("fraction", "WeirdML"),
    "wino_grande_external": ("fraction", "WinoGrande"),
}

TOL = 1e-9
UNIT_RANGES: dict[str, tuple[float, float]] = {
    "fraction": (-TOL, 1.0 + TOL),
    "percent": (0.0, 100.0),
    "elo": (0.0, 4000.0),
    "points": (0.0, 5000.0),  # GeoBench: at most 5,000 points per round
    "minutes": (0.0, 1_000_000.0),
    "index": (-1000.0, 1000.0),
    "score": (0.0, 10.0),  # Lech Mazur writing: 0-10
}

# Columns not worth carrying into `extra` (long prose, raw log links, the score itself).
EXTRA_SKIP = {"Training compute notes", "Logs", "Description"}
# Columns renamed to the common extra vocabulary; numeric ones are stored as numbers.
EXTRA_NUMERIC = {
    "stderr": "stderr",
    "Accuracy SE": "stderr",
    "Average Standard error": "stderr",
    "Cost": "cost",
    "Avg. Cost ($)": "cost",
    "Cost per run": "cost",
    "Average costs": "cost",
    "CI_low": "ci_low",
    "CI_high": "ci_high",
    "Votes": "votes",
    "Training compute (FLOP)": "training_compute_flop",
}


def _snake(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def _benchmark_key(member: str) -> str:
    return "eci" if member == ECI_MEMBER else member.removesuffix(".csv")


def read_members(data: bytes) -> dict[str, bytes]:
    """The top-level CSV members of the export, read defensively (hostile-ZIP checks)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise ParseError(SOURCE_ID, URL, f"not a ZIP archive ({exc})") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise ParseError(SOURCE_ID, URL, f"{len(infos)} members, over {MAX_MEMBERS}")
        total = 0
        for info in infos:
            name = info.filename
            if (
                name.startswith(("/", "\\"))
                or re.match(r"^[A-Za-z]:", name)
                or ".." in re.split(r"[/\\]", name)
            ):
                raise ParseError(SOURCE_ID, URL, "unsafe member path", f"member {name!r}")
            total += info.file_size
            if total > MAX_TOTAL_BYTES:
                raise ParseError(
                    SOURCE_ID, URL, f"uncompressed size over {MAX_TOTAL_BYTES}", f"member {name!r}"
                )
            if info.file_size > MAX_RATIO * max(info.compress_size, 1):
                raise ParseError(
                    SOURCE_ID,
                    URL,
                    f"compression ratio over {MAX_RATIO} (decompression bomb?)",
                    f"member {name!r}",
                )
        members: dict[str, bytes] = {}
        for info in infos:
            name = info.filename
            if info.is_dir() or "/" in name or not name.endswith(".csv"):
                continue  # README.md, additional_eci_data/*
            try:
                with archive.open(info) as handle:
                    content = handle.read(MAX_MEMBER_BYTES + 1)
            except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError) as exc:
                raise ParseError(
                    SOURCE_ID, URL, f"unreadable ({exc})", f"member {name!r}"
                ) from None
            if len(content) > MAX_MEMBER_BYTES or len(content) > info.file_size:
                raise ParseError(SOURCE_ID, URL, "member larger than declared", f"member {name!r}")
            members[name] = content
    if not members:
        raise ParseError(SOURCE_ID, URL, "archive holds no benchmark CSV")
    return members


def _extra(header: list[str], fields: list[str], skip: set[str]) -> dict[str, object]:
    facts: dict[str, object] = {}
    for column, raw in zip(header, fields, strict=False):
        if column in skip or column in EXTRA_SKIP:
            continue
        text = raw.strip()
        if not text:
            continue
        key = EXTRA_NUMERIC.get(column)
        if key is not None:
            try:
                facts[key] = float(text.lstrip("$").replace(",", ""))
                continue
            except ValueError:
                pass
        facts[_snake(column)] = text
    return facts


def _parse_member(member: str, data: bytes) -> list[dict[str, object]]:
    where = f"{URL} member {member}"
    text = decode_text(SOURCE_ID, where, data)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise ParseError(SOURCE_ID, where, f"bad CSV ({exc})", f"{member} line 1") from None
    if not header or header[0].strip() != "Model version":
        raise ParseError(
            SOURCE_ID, where, "missing column 'Model version' (first column)", f"{member} line 1"
        )
    header = [h.strip() for h in header]
    score_at = next((i for i in range(1, len(header)) if header[i] not in SETTING_COLUMNS), None)
    if score_at is None:
        raise ParseError(SOURCE_ID, where, "no score column after 'Model version'", member)
    score_column = header[score_at]
    if score_column in NOT_A_SCORE:
        raise ParseError(
            SOURCE_ID, where, f"no score column before {score_column!r}", f"{member} line 1"
        )
    bench = _benchmark_key(member)
    unit, bench_name = BENCHMARKS.get(bench, ("score", bench))
    known = bench in BENCHMARKS
    low, high = UNIT_RANGES[unit]
    name_columns = ("Display name", "Model name") if bench == "eci" else ("Name",)
    rows: list[dict[str, object]] = []
    start = 2
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise ParseError(
                SOURCE_ID, where, f"bad CSV ({exc})", f"{member} line {start}"
            ) from None
        ref = f"{member} line {start}"
        start = reader.line_num + 1
        if not any(f.strip() for f in fields):
            continue
        cell = dict(zip(header, fields, strict=False))
        key = fields[0].strip()
        name = next((cell[c].strip() for c in name_columns if cell.get(c, "").strip()), key)
        agent = None
        for column in AGENT_COLUMNS:
            value = cell.get(column, "").strip()
            if value.lower() not in NOT_AN_AGENT:
                agent = value
                break
        facts: dict[str, object] = {"score_column": score_column}
        facts.update(_extra(header, fields, {"Model version", score_column}))
        raw = cell.get(score_column, "").strip()
        value: float | None = None
        if len(fields) != len(header):
            facts["rejected"] = f"ragged row: {len(fields)} fields for {len(header)} columns"
        elif not key:
            facts["rejected"] = "empty Model version"
        elif not known:
            facts["rejected"] = f"no unit known for benchmark file {member}"
        elif raw == "":
            facts["rejected"] = f"blank {score_column}"
        else:
            value = finite_value(SOURCE_ID, where, raw, f"{ref}, {score_column}")
            if value is not None and not low <= value <= high:
                raise ParseError(
                    SOURCE_ID, where, f"{score_column}={value} outside {unit} range", ref
                )
        if value is None and raw and "rejected" in facts:
            facts["published_value"] = raw
        rows.append(
            {
                "source": SOURCE_ID,
                "payload_url": URL,
                "row_ref": ref,
                "model_key": key or None,
                "model_name": name or None,
                "benchmark_key": bench,
                "benchmark_name": bench_name,
                "value": value,
                "unit": unit,
                "agent": agent,
                "extra": extra_json(facts),
            }
        )
    return rows


def parse(payloads: Mapping[str, bytes]) -> pl.DataFrame:
    if URL not in payloads:
        raise ParseError(SOURCE_ID, URL, "payload missing")
    rows: list[dict[str, object]] = []
    for member, data in sorted(read_members(payloads[URL]).items()):
        rows.extend(_parse_member(member, data))
    return mark_repeated_keys(scores_frame(rows))


SOURCE = Source(
    id=SOURCE_ID,
    title="Epoch AI Benchmarking Hub",
    homepage="https://epoch.ai/benchmarks",
    urls=(URL,),
    parse=parse,
    licence="CC BY 4.0 (Epoch AI); *_external files republish third-party leaderboards, "
    "whose own terms also apply",
    attribution="Epoch AI, 'Data on AI Benchmarking'. Published online at epoch.ai. "
    "Retrieved from https://epoch.ai/benchmarks",
    max_bytes=16 * 1024 * 1024,
)
