"""Epoch AI Benchmarking Hub: a ZIP export of one CSV per benchmark plus the ECI file.

Every benchmark CSV starts with `Model version`, then the headline score column (possibly after a
setting column such as `Agent`, `Scaffold` or `Tools`), then shared metadata and file-specific
columns. Scales differ per file (SOURCE.md, "Scales"), so each file is mapped to its unit here and
its values are range-checked against it. One output row per CSV data row.

Many files list a model several times (results from several papers, dates or runs): all rows
are kept, and the rows sharing a model, setting and benchmark name each other in
`extra["same_key_rows"]`, so the matrix's choice among them leaves the others named.

**`Name` vs `Model version`.** The files that republish paper tables (`*_external` with a `Name`
column) carry the name the paper printed (`Name`) next to Epoch's model link (`Model version`).
In the 2026-01-17 export 1,303 of the 2,771 keyed rows of the benchmark files have a `Name` that
differs from `Model version`; almost all are spellings of the same model (594 differ only in case
and punctuation, e.g. `Mistral 7B` / `Mistral-7B-v0.1`; most others drop or add a size, version or
date - `LLAMA 1 7B` / `LLaMA-7B`, `GPT-3 (175B)` / `text-davinci-001`, `Llama 3 (8B)` /
`Meta-Llama-3-8B-Instruct`). Those are left alone: `Model version` names the model. A row is
not credited to `Model version` only when `Name` contradicts it (`name_conflict`):

- **base**: `Name` says the pretrained model (a word `Base`) and `Model version` does not
  (`DeepSeek-V3 Base` / `DeepSeek-V3`: the base model's numbers from the V3 paper were linked to
  the chat model): 32 rows (DeepSeek-V3 7, DeepSeek-V2 8, Qwen2.5-72B 8, Llama-3.1-405B 8,
  ChatGLM2-6B 1). Qwen2.5-72B, Llama-3.1-405B and DeepSeek-V2 are the pretrained models under
  their Hugging Face names already: their `Name`s place them only once `model_aliases.csv`
  maps those spellings onto the `Model version` ids (the rules alone build `<name>-base`).
- **size**: both state a parameter count and they share none (`Qwen2.5-Coder-3B` /
  `Qwen2.5-Coder-32B`, `Llama 2 (7B)` / `Llama-2-70b-hf`), or both state a size tier that differs
  (`Phi-3-small` / `Phi-3-mini-4k-instruct`, `PaLM 2-L` / `PaLM 2-S`): 4 rows. `Qwen-1_8B` is
  1.8B, and LLaMA-1 33B is also published as 30B (`SIZE_SYNONYMS`).
- **system**: `Name` shares no word with `Model version`: a method or system built on the model
  (`AdaReTaKe` / `Qwen2.5-VL-72B-Instruct`, `ReTaKe`, `QuoTA`, `ShareGeminiXMU`): 4 rows. OpenAI's
  legacy API ids (`davinci`, `text-davinci-00x`, `curie` ...) are GPT-3/GPT-3.5 under another word
  and are not a conflict (`SAME_FAMILY`).

A base or size conflict names one model in `Name`, so the row is identified from `Name` instead:
`extra["identity_from"] = "model_name"` (read by `pipelines/identity/resolve.py`) with the reason in
`extra["name_conflict"]`; it then no longer competes with the `Model version` rows for a cell
(`same_key_rows` groups it under its `Name`). A system conflict names no model, so the row is kept
with a null value and a `rejected` reason (`published_value` holds the number). The ECI file's
`Model name`/`Display name` are Epoch's family-level labels (`o1` for `o1-pro-2025-03-19_low`) and
are not checked.

**Release dates.** `Release date` (benchmark files and the ECI file) is the model's public
release, not the evaluation's (SOURCE.md; evaluation timing is `Started at` / `Date of
evaluation` / `Run date`): it is the row's `release_date`, except on a row identified from its
`Name` (a base or size conflict), whose date would be `Model version`'s model's.

**Incomplete runs.** Epoch-run files carry the run `id`; a run id marked incomplete
(`..._frankenstein_run_incomplete`, `frontiermath.csv` line 2, DeepSeek-V3.2) is kept with a null
value and a `rejected` reason. `frankenstein` alone marks a run stitched from several attempts
(5 rows in chess_puzzles, frontiermath, frontiermath_tier_4) and is not a sign of an incomplete run.
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
    stated_date,
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


# --------------------------------------------------------------- Name vs Model version
# Words that name the same model under another word: OpenAI's legacy API ids are GPT-3 / GPT-3.5.
SAME_FAMILY: dict[str, frozenset[str]] = {
    "gpt": frozenset({"davinci", "curie", "babbage", "ada"}),
}
# Parameter counts that denote one model: LLaMA-1 33B is also published as 30B.
SIZE_SYNONYMS: tuple[frozenset[str], ...] = (frozenset({"30b", "33b"}),)
SIZE_TIERS = frozenset({"nano", "micro", "tiny", "mini", "small", "medium", "large", "xl", "xxl"})
_SIZE = re.compile(r"(?<![a-z0-9.])((?:\d+x)?\d+(?:\.\d+)?[bm])(?![a-z0-9])")
_LETTER_TIER = re.compile(r"(?<=\d)[\s-]+(xs|s|m|l|xl)$")  # PaLM 2-S / PaLM 2-L
_INCOMPLETE = re.compile(r"(?:^|[^a-z])(?:incomplete|unfinished|aborted)(?:[^a-z]|$)")


def _words(text: str) -> set[str]:
    """Name words: runs of letters and digits holding a letter (`o1`, `t5`, `llama`), two
    characters or more, sizes (`7b`) left out."""
    return {
        w
        for w in re.findall(r"[a-z0-9]+", text.lower())
        if len(w) >= 2 and re.search(r"[a-z]", w) and not re.fullmatch(r"\d+(?:x\d+)?[bmk]", w)
    }


def _sizes(text: str) -> set[str]:
    low = re.sub(r"(?<=\d)_(?=\d)", ".", text.lower())  # Qwen-1_8B is 1.8B
    low = re.sub(r"[\s_()-]+", " ", low)
    found = set(_SIZE.findall(low))
    for synonyms in SIZE_SYNONYMS:
        if found & synonyms:
            found |= synonyms
    return found


def _tiers(text: str) -> set[str]:
    tiers = {w for w in re.findall(r"[a-z]+", text.lower()) if w in SIZE_TIERS}
    if match := _LETTER_TIER.search(text.lower().strip()):
        tiers.add(match.group(1))
    return tiers


def _shares_word(key: str, name: str) -> bool:
    """Whether `name` and `key` share a word (one may run into the next: `OpenLLaMA` /
    `open_llama`), counting a legacy OpenAI id as its GPT family name."""
    key_words, name_words = _words(key), _words(name)
    for family, members in SAME_FAMILY.items():
        for words in (key_words, name_words):
            if words & members:
                words.add(family)
    if key_words & name_words:
        return True
    key_run = re.sub(r"[^a-z0-9]", "", key.lower())
    name_run = re.sub(r"[^a-z0-9]", "", name.lower())
    return any(len(w) >= 3 and w in key_run for w in name_words) or any(
        len(w) >= 3 and w in name_run for w in key_words
    )


MAX_NAME_CHARS = 200  # model names are short; the word checks below grow with length squared


def name_conflict(key: str, name: str) -> tuple[str, str] | None:
    """(kind, reason) when `Name` contradicts `Model version` (module docstring), else None."""
    if not name or name == key:
        return None
    if len(name) > MAX_NAME_CHARS or len(key) > MAX_NAME_CHARS:
        return "system", f"Name or Model version longer than {MAX_NAME_CHARS} characters"
    if not _shares_word(key, name):
        return "system", (
            f"Name {name!r} shares no word with Model version {key!r}: another system or "
            "method, not the model"
        )
    if "base" in _words(name) and "base" not in _words(key):
        return "base", f"Name {name!r} is the base model, Model version {key!r} is not"
    key_sizes, name_sizes = _sizes(key), _sizes(name)
    if key_sizes and name_sizes and not key_sizes & name_sizes:
        return "size", (
            f"Name {name!r} states size {'/'.join(sorted(name_sizes))}, Model version {key!r} "
            f"{'/'.join(sorted(key_sizes))}"
        )
    key_tiers, name_tiers = _tiers(key), _tiers(name)
    if key_tiers and name_tiers and not key_tiers & name_tiers:
        return "size", (
            f"Name {name!r} states size {'/'.join(sorted(name_tiers))}, Model version {key!r} "
            f"{'/'.join(sorted(key_tiers))}"
        )
    return None


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
        for own in ("identity_from", "name_conflict"):  # ours to set, never a payload column's
            facts.pop(own, None)
        raw = cell.get(score_column, "").strip()
        value: float | None = None
        conflict = name_conflict(key, cell.get("Name", "").strip()) if key else None
        run_id = cell.get("id", "").strip()
        if conflict is not None:
            facts["name_conflict"] = conflict[1]
            if conflict[0] != "system":
                facts["identity_from"] = "model_name"
        if len(fields) != len(header):
            facts["rejected"] = f"ragged row: {len(fields)} fields for {len(header)} columns"
        elif not key:
            facts["rejected"] = "empty Model version"
        elif not known:
            facts["rejected"] = f"no unit known for benchmark file {member}"
        elif raw == "":
            facts["rejected"] = f"blank {score_column}"
        elif _INCOMPLETE.search(run_id.lower()):
            facts["rejected"] = f"incomplete run (id {run_id!r})"
        elif conflict is not None and conflict[0] == "system":
            facts["rejected"] = conflict[1]
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
                # `Release date` is the model's (SOURCE.md), i.e. `Model version`'s: a row
                # credited to its `Name` instead is another model, whose date the file lacks
                "release_date": (
                    None if "identity_from" in facts else stated_date(cell.get("Release date"))
                ),
            }
        )
    return rows


def parse(payloads: Mapping[str, bytes]) -> pl.DataFrame:
    if URL not in payloads:
        raise ParseError(SOURCE_ID, URL, "payload missing")
    rows: list[dict[str, object]] = []
    for member, data in sorted(read_members(payloads[URL]).items()):
        rows.extend(_parse_member(member, data))
    frame = scores_frame(rows)
    # a row identified from its Name competes for a cell under that name, not under the key
    by_name = pl.col("extra").str.json_path_match("$.identity_from") == "model_name"
    keyed = frame.with_columns(
        pl.when(by_name.fill_null(False))
        .then(pl.col("model_name"))
        .otherwise(pl.col("model_key"))
        .alias("model_key")
    )
    marked = mark_repeated_keys(keyed)
    return frame.with_columns(marked["extra"])


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
    priority=100,  # last: an aggregator, many numbers re-published from elsewhere
    frontier=True,
    max_bytes=16 * 1024 * 1024,
)
