"""llm-stats.com data repository: vendor-reported benchmark scores, one JSON file per model.

The repository `JonathanChavezTamales/llm-leaderboard` keeps, per model,
`data/organizations/<org>/models/<dir>/benchmarks.json` (a list of score records) and `model.json`
(name, release date, licence, size ...). Fetching is two-step: the fixed URL is the GitHub
git-trees listing of `main` (recursive), and `discover` turns it into raw.githubusercontent.com
URLs of every `model.json` and `benchmarks.json`. The listing may be the GitHub API JSON
(`{"tree": [{"path", "type"}...], "truncated"}`; a truncated listing is refused) or a
`git ls-tree -r -l` text listing (`mode type sha size<TAB>path`), which the recorded copy is.
`data/benchmarks/<id>.json` definitions are not fetched: every score record already carries its
`benchmark_name`, their `max_score` contradicts the scores' actual scale (e.g. mbpp says 100 while
its scores are fractions), and seven of their file names contain literal `%3C`/`%3A` escapes.

One row per score record (`benchmarks.json[i]`). `model_key` is the record's `model_id` (the
directory name differs once: `nemotron-nano-9b-v2` holds `nvidia-nemotron-nano-9b-v2`; kept in
`extra["directory"]`); `model_name` is `model.json`'s `name` (not unique: two models are named
"Claude 3.5 Sonnet"). `analysis_method` (free text like "0-shot CoT", the only place settings
appear) stays in `extra`, together with `normalized_score`, self-report flags, the source link,
record dates and the model facts. The same (model, benchmark) pair can have several records with
different scores (with/without tools, ...): all are kept, marked with `records_for_pair` and
`same_key_rows` (every record of the pair, in order), so the ones the matrix does not publish are
named.

Unit per record, from `score` and `normalized_score` (never from the benchmark definition):
`fraction` when the record's score is on 0-1 (almost all); `percent` when score / normalized_score
is 100 (the older snapshot's 73 records such as mbpp 90.2 / 0.902); `rating` for raw ratings
(`cfeval` 2071 / 0.2071, older `codeforces` 1977), recognised by the benchmark id or a ratio of at
least 1000. A score above 1 matching none of these cannot be placed on a scale: it is kept with a
null value and a `rejected` reason. A negative score is a ParseError.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from urllib.parse import quote, urlsplit

import polars as pl

from pipelines.sources.base import (
    ParseError,
    Source,
    decode_text,
    extra_json,
    finite_value,
    load_json,
    mark_repeated_keys,
    scores_frame,
)

SOURCE_ID = "llm_stats"
REPO = "JonathanChavezTamales/llm-leaderboard"
REF = "main"
LISTING_URL = f"https://api.github.com/repos/{REPO}/git/trees/{REF}?recursive=1"
RAW_BASE = f"https://raw.githubusercontent.com/{REPO}/{REF}/"
MODEL_FILE = re.compile(r"^data/organizations/([^/]+)/models/([^/]+)/(model|benchmarks)\.json$")
URL_FILE = re.compile(r"/data/organizations/([^/]+)/models/([^/]+)/(model|benchmarks)\.json$")
RECORD_KEYS = ("model_id", "benchmark_id", "score")
RATING_BENCHMARKS = frozenset({"codeforces", "cfeval"})
MAX_RATING = 10000.0
TOLERANCE = 1e-9
MAX_FILES = 2000  # ~340 files today (169 models); a listing far beyond that is suspicious


def _listing_paths(data: bytes) -> list[str]:
    text = decode_text(SOURCE_ID, LISTING_URL, data)
    if text.lstrip().startswith("{"):
        doc = load_json(SOURCE_ID, LISTING_URL, data)
        if not isinstance(doc, dict) or not isinstance(doc.get("tree"), list):
            raise ParseError(SOURCE_ID, LISTING_URL, "expected a git tree object with 'tree'")
        if doc.get("truncated"):
            raise ParseError(SOURCE_ID, LISTING_URL, "the tree listing is truncated")
        return [
            entry["path"]
            for entry in doc["tree"]
            if isinstance(entry, dict)
            and entry.get("type") == "blob"
            and isinstance(entry.get("path"), str)
        ]
    paths = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        meta, tab, path = line.partition("\t")
        fields = meta.split()
        if not tab or len(fields) != 4 or not path:
            raise ParseError(
                SOURCE_ID,
                LISTING_URL,
                "not a 'mode type sha size<TAB>path' line",
                f"line {line_no}",
            )
        if fields[1] == "blob":
            paths.append(path)
    return paths


def discover(payloads: Mapping[str, bytes]) -> Sequence[str]:
    """The listing -> raw URLs of every model's `model.json` and `benchmarks.json`."""
    urls = []
    for path in _listing_paths(payloads[LISTING_URL]):
        if MODEL_FILE.match(path) and not {".", ".."} & set(path.split("/")):
            urls.append(RAW_BASE + quote(path, safe="/+-_.~()@,'!"))
    return sorted(set(urls))


def _unit(score: float, normalized: float | None, benchmark: str) -> str | None:
    """The scale of one record's score, or None when it cannot be told."""
    ratio = score / normalized if normalized else None
    if ratio is not None and abs(ratio - 100.0) <= 0.5 and score <= 100.0 + TOLERANCE:
        return "percent"
    if score <= 1.0 + TOLERANCE:
        return "fraction"
    if score <= MAX_RATING and (benchmark in RATING_BENCHMARKS or (ratio or 0.0) >= 1000.0):
        return "rating"
    return None


def _model_facts(url: str, data: bytes | None) -> dict:
    if data is None:
        return {}
    doc = load_json(SOURCE_ID, url, data)
    if not isinstance(doc, dict):
        raise ParseError(SOURCE_ID, url, "model.json is not an object")
    return doc


def parse(payloads: Mapping[str, bytes]) -> pl.DataFrame:
    folders: dict[tuple[str, str], dict[str, str]] = {}
    for url in payloads:
        if url == LISTING_URL:
            continue
        match = URL_FILE.search(urlsplit(url).path)
        if not match:
            raise ParseError(
                SOURCE_ID, url, "unexpected payload (not a model.json/benchmarks.json)"
            )
        folders.setdefault((match.group(1), match.group(2)), {})[match.group(3)] = url
    rows: list[dict] = []
    for (org, directory), files in sorted(folders.items()):
        if "benchmarks" not in files:
            continue  # a model without scores (e.g. o3-pro-2025-06-10) has nothing to emit
        model_url = files.get("model")
        model = _model_facts(model_url, payloads[model_url]) if model_url else {}
        rows += _model_rows(
            files["benchmarks"], payloads[files["benchmarks"]], org, directory, model
        )
    return mark_repeated_keys(scores_frame(rows))


def _model_rows(url: str, data: bytes, org: str, directory: str, model: dict) -> list[dict]:
    records = load_json(SOURCE_ID, url, data)
    if not isinstance(records, list):
        raise ParseError(SOURCE_ID, url, "benchmarks.json is not a list of score records")
    name = f"{org}/models/{directory}/benchmarks.json"
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise ParseError(SOURCE_ID, url, "record is not an object", f"{name}[{i}]")
        missing = [k for k in RECORD_KEYS if k not in record]
        if missing:
            raise ParseError(SOURCE_ID, url, f"missing keys {missing}", f"{name}[{i}]")
    pairs = Counter((str(r["model_id"]), str(r["benchmark_id"])) for r in records)
    model_facts = {
        "organization_id": model.get("organization_id") or org,
        "release_date": model.get("release_date"),
        "announcement_date": model.get("announcement_date"),
        "license_id": model.get("license_id"),
        "param_count": model.get("param_count"),
        "multimodal": model.get("multimodal"),
        "knowledge_cutoff": model.get("knowledge_cutoff"),
        "fine_tuned_from_model_id": model.get("fine_tuned_from_model_id"),
    }
    rows = []
    for i, record in enumerate(records):
        ref = f"{name}[{i}]"
        key = str(record["model_id"] or "").strip()
        bench = str(record["benchmark_id"] or "").strip()
        score = finite_value(SOURCE_ID, url, record["score"], f"{ref}, score")
        normalized = finite_value(
            SOURCE_ID, url, record.get("normalized_score"), f"{ref}, normalized_score"
        )
        facts = {
            **model_facts,
            "directory": directory if directory != key else None,
            "model_json_id": model.get("model_id") if model.get("model_id") != key else None,
            "normalized_score": normalized,
            "analysis_method": record.get("analysis_method"),
            "is_self_reported": record.get("is_self_reported"),
            "verified_by_llmstats": record.get("verified_by_llmstats"),
            "source_link": record.get("self_reported_source_link"),
            "verification_provider_id": record.get("verification_provider_id"),
            "verification_date": record.get("verification_date"),
            "verification_notes": record.get("verification_notes"),
            "model_benchmark_id": record.get("model_benchmark_id"),
            "created_at": record.get("created_at"),
            "updated_at": record.get("updated_at"),
            "records_for_pair": pairs[(str(record["model_id"]), str(record["benchmark_id"]))],
        }
        if facts["records_for_pair"] == 1:
            facts["records_for_pair"] = None
        unit = None
        reason = None
        if not key:
            reason = "empty model_id"
        elif not bench:
            reason = "empty benchmark_id"
        elif score is None:
            reason = "score is null"
        else:
            if score < -TOLERANCE:
                raise ParseError(SOURCE_ID, url, f"negative score {score}", ref)
            unit = _unit(score, normalized, bench)
            if unit is None:
                reason = f"score {score} with normalized_score {normalized}: scale unknown"
        row = {
            "source": SOURCE_ID,
            "payload_url": url,
            "row_ref": ref,
            "model_key": key or None,
            "model_name": model.get("name") or key or None,
            "benchmark_key": bench or None,
            "benchmark_name": record.get("benchmark_name") or bench or None,
            "unit": unit or "score",  # only rejected rows lack a unit
        }
        if reason:
            rows.append({**row, "value": None, "extra": extra_json({**facts, "rejected": reason})})
        else:
            rows.append({**row, "value": score, "extra": extra_json(facts)})
    return rows


SOURCE = Source(
    id=SOURCE_ID,
    title="LLM Stats (llm-stats.com) model and benchmark data",
    homepage="https://llm-stats.com/",
    urls=(LISTING_URL,),
    parse=parse,
    licence=(
        "CC BY 4.0 (JonathanChavezTamales/llm-leaderboard LICENSE.md); "
        "scores mostly vendor-reported"
    ),
    attribution=(
        "LLM Stats (llm-stats.com), github.com/JonathanChavezTamales/llm-leaderboard, CC BY 4.0."
    ),
    max_bytes=8 * 1024 * 1024,
    discover=discover,
    max_files=MAX_FILES,
)
