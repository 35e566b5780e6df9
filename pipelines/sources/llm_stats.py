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

`analysis_method` (517 distinct strings over the 2,224 records of the recorded copy, 75 null) is
read by explicit rules, case-insensitive, never fuzzily; the text stays in `extra`.

Setting (the model's mode, stated through the same `thinking_budget` / `reasoning_effort`
columns other sources use, so `rules.parse_name` merges it into the model's `Setting`):

    pattern (SETTING_RULES)                           column                 records
    non-thinking | without thinking | no thinking |   thinking_budget "0"    Non-Thinking mode,
      no extended thinking | reasoning off              (= thinking off)     GPT-4o without
                                                                             thinking mode, ...
    extended thinking ... up to <n>K tokens           thinking_budget "<n>K" Claude 4 tables
    thinking mode | reasoning mode | reasoning on |   thinking_budget "on"   DeepSeek, GPT-5/o3,
      thinking no tools | extended thinking |                                Nemotron ("Pass@1,
      a comma-separated part that is "Reasoning"                             Reasoning")
    o<k>[-mini][- ]low|medium|high                    reasoning_effort       "o3-mini high"

"Off" is tested first ("No extended thinking", "without thinking mode" also contain the "on"
words). Descriptions that merely mention reasoning ("Graduate-level reasoning", "Commonsense
reasoning") match nothing. A budget is read only after "extended thinking" (Anthropic's budget
parameter); GPT-5's "Thinking mode enabled (up to 128K tokens)" is an output cap, not a budget.

Protocol (PROTOCOL_RULES, first match wins). The matrix publishes a benchmark's standard
single-attempt score; anything else is kept with a null value and a `rejected` reason (and the
rule's label in `analysis_rule`), or moved to the variant benchmark key `<key>-(<variant>)`
(llm-stats' own spelling of variants, e.g. `swe-bench-verified-(agentless)`) that
`benchmark_aliases.csv` maps when the registry has that benchmark (the record's own id is kept
in `extra["record_benchmark_id"]`):

    label            pattern                                      action
    samples          pass@k / cons@k / maj@k with k > 1           reject (best of / vote over k)
                     (Avg@k and maj@1 are single-attempt           (pass@2 on Aider Polyglot keys
                     estimates and stay)                           is Aider's own score and stays)
    aider-pass@2     `aider` key + pass@2                          reject: 2025 vendor "Aider
                                                                   Pass@2" is Aider Polyglot, the
                                                                   key maps to the code-editing set
    parallel         parallel test-time compute | multiple         reject
                     (parallel) attempts
    earnings         earnings                                      reject (SWE-Lancer dollars)
    estimate         starts with "Estimated"                       reject (not a measured score)
    error-rate       WER | word error rate (not "1 - WER")         reject (lower is better)
    percentile       percentile                                    reject (a rank, not a score)
    text-only        text-only | text subset | text-based          HLE keys: variant `text-only`
                     questions only                                (-> hle_text)
    tools            with tools | (... tools) | + browser |        agentic keys (swe-bench*,
                     + browsing | search agent | tool use |        terminal-bench*, tau*,
                     python tool, after removing "no tools",       browsecomp*, osworld*,
                     "without tools", "w/o tool use",              frontiermath, bfcl*, aider*):
                     "no custom tools"                             standard, kept; HLE keys:
                                                                   variant `with-tools`
                                                                   (-> hle_tools); any other key:
                                                                   reject (closed-book benchmark)

One reviewed data fix (COPIED_TABLES): llm-stats' `qwen3-235b-a22b` file holds 15 records copied
from the Qwen3-235B-A22B-Base (pretrained) table of the Qwen3 blog (mmlu 0.8781, gpqa 0.4747 ...);
each is matched by (model id, benchmark id, exact score) and keyed `qwen3-235b-a22b-base`
(original id in `extra["record_model_id"]`), which `model_aliases.csv` places (today: unresolved,
no base-model id in `models.csv`). The chat-model records of the file keep their key.

Release date: `model.json`'s `release_date`, else its `announcement_date`, is every record's
`release_date` (not on the copied records above: the date is the chat model's). The records'
own `created_at` / `updated_at` / `verification_date` are llm-stats' bookkeeping, kept in `extra`.
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
    stated_date,
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

# ------------------------------------------------------------------ analysis_method rules
_I = re.IGNORECASE
# (pattern, thinking_budget column value); "off" first (module docstring)
SETTING_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"\bnon-thinking\b|\bwithout thinking\b|\bno (?:extended )?thinking\b"
            r"|\breasoning off\b",
            _I,
        ),
        "0",
    ),
    (  # the gap is bounded: an unbounded lazy gap is quadratic on a hostile record
        re.compile(
            r"\bextended thinking\b[^.]{0,200}?\bup to (?P<budget>\d{1,4})\s*k tokens\b", _I
        ),
        "",
    ),
    (
        re.compile(
            r"\bthinking mode\b|\breasoning mode\b|\breasoning on\b|\bthinking no tools\b"
            r"|\bextended thinking\b|(?:^|,)\s*reasoning\s*(?:,|$)",
            _I,
        ),
        "on",
    ),
)
EFFORT_RULE = re.compile(r"\bo\d(?:-mini)?[ -](?P<effort>low|medium|high)\b", _I)

# at most 6 digits: int() of a 5,000-digit k would raise ValueError (Python's digit limit)
SAMPLES = re.compile(r"\b(?P<kind>pass|cons|maj(?:ority)?)\s*@\s*(?P<k>\d{1,6})", _I)
PARALLEL = re.compile(r"parallel test-time compute|multiple (?:parallel )?attempts", _I)
EARNINGS = re.compile(r"\bearnings\b", _I)
ESTIMATE = re.compile(r"^\s*estimated\b", _I)
ERROR_RATE = re.compile(r"\bWER\b|\bword error rate\b", _I)
ONE_MINUS_WER = re.compile(r"\b1\s*-\s*WER\b", _I)
PERCENTILE = re.compile(r"\bpercentile\b", _I)
TEXT_ONLY = re.compile(r"\btext[- ]only\b|\btext subset\b|\btext-based questions only\b", _I)
NO_TOOLS = re.compile(r"\b(?:no|without|w/o)\s+(?:custom\s+)?tools?\b(?:\s+use\b)?", _I)
TOOLS = re.compile(
    r"\bwith tools\b|\btools\)|\+\s*browser|\+\s*browsing|\bsearch agent\b|\btool use\b"
    r"|\bpython tool\b",
    _I,
)
# benchmarks whose standard protocol gives the model tools (agents, browsing, a Python sandbox)
AGENTIC_KEYS = re.compile(
    r"^(?:swe-bench|terminal-bench|tau|browsecomp|osworld|frontiermath|bfcl|aider)", _I
)
AIDER_POLYGLOT_KEYS = re.compile(r"^aider-polyglot", _I)
HLE_KEYS = frozenset({"hle", "humanity's-last-exam"})

# Reviewed data fixes: (model_id, benchmark_id, exact score) -> the model the record is about.
# The Qwen3 blog's Qwen3-235B-A22B-Base table, copied into llm-stats' chat-model file.
COPIED_TABLES: dict[tuple[str, str, float], str] = {
    ("qwen3-235b-a22b", bench, score): "qwen3-235b-a22b-base"
    for bench, score in (
        ("mmlu", 0.8781),
        ("mmlu-redux", 0.874),
        ("mmlu-pro", 0.6818),
        ("supergpqa", 0.4406),
        ("bbh", 0.8887),
        ("gpqa", 0.4747),
        ("gsm8k", 0.9439),
        ("math", 0.7184),
        ("evalplus", 0.776),
        ("multipl-e", 0.6594),
        ("mbpp", 0.814),
        ("crux-o", 0.79),
        ("mgsm", 0.8353),
        ("mmmlu", 0.867),
        ("include", 0.7346),
    )
}


def method_setting(method: str | None) -> tuple[str | None, str | None]:
    """(thinking_budget, reasoning_effort) an `analysis_method` states (SETTING_RULES)."""
    if not method:
        return None, None
    budget = None
    for pattern, value in SETTING_RULES:
        match = pattern.search(method)
        if match:
            budget = f"{match['budget']}K" if "budget" in pattern.groupindex else value
            break
    effort = EFFORT_RULE.search(method)
    return budget, effort["effort"].lower() if effort else None


def method_protocol(method: str | None, bench: str) -> tuple[str, str, str] | None:
    """(label, action, detail) of the first PROTOCOL rule an `analysis_method` matches on
    benchmark key `bench`: action `reject` (detail = the reason) or `variant` (detail = the
    variant name); None = the benchmark's standard protocol."""
    if not method:
        return None
    low = bench.lower()
    for match in SAMPLES.finditer(method):
        k = int(match["k"])
        if k <= 1:
            continue
        if match["kind"].lower() == "pass" and k == 2 and AIDER_POLYGLOT_KEYS.match(low):
            continue  # Aider's own score is pass_rate_2 (a second try after test feedback)
        if low == "aider" and match["kind"].lower() == "pass" and k == 2:
            return (
                "aider-pass@2",
                "reject",
                "Pass@2 on 'aider': vendor tables of 2025 report Aider Polyglot's pass@2; "
                "'aider' is the 133-exercise code-editing set",
            )
        return (
            "samples",
            "reject",
            f"{match.group(0)!r}: scored over {k} samples, not the single-attempt score",
        )
    if PARALLEL.search(method):
        return (
            "parallel",
            "reject",
            "several attempts with a selection step (parallel test-time compute), "
            "not the single-attempt score",
        )
    if EARNINGS.search(method):
        return ("earnings", "reject", "earnings-based (dollar) evaluation, not a percent of tasks")
    if ESTIMATE.search(method):
        return ("estimate", "reject", "an estimate, not a measured score")
    if ERROR_RATE.search(method) and not ONE_MINUS_WER.search(method):
        return ("error-rate", "reject", "a word error rate (lower is better), not an accuracy")
    if PERCENTILE.search(method):
        return ("percentile", "reject", "a percentile rank, not a percent score")
    if low in HLE_KEYS and TEXT_ONLY.search(method):
        return ("text-only", "variant", "text-only")
    tools = TOOLS.search(NO_TOOLS.sub(" ", method))
    if tools and not AGENTIC_KEYS.match(low):
        if low in HLE_KEYS:
            return ("tools", "variant", "with-tools")
        return (
            "tools",
            "reject",
            f"tool use ({tools.group(0).strip()!r}) on a closed-book benchmark",
        )
    return None


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
    released = stated_date(model.get("release_date")) or stated_date(model.get("announcement_date"))
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
        method = record.get("analysis_method")
        method = method if isinstance(method, str) else None
        budget, effort = method_setting(method)
        protocol = method_protocol(method, bench) if bench else None
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
        bench_name = record.get("benchmark_name") or bench or None
        copied = COPIED_TABLES.get((key, bench, score)) if score is not None else None
        if copied:
            facts["record_model_id"], key = key, copied
        if protocol is not None:
            label, action, detail = protocol
            facts["analysis_rule"] = label
            if action == "variant":
                facts["record_benchmark_id"] = bench
                bench, bench_name = f"{bench}-({detail})", f"{bench_name} ({detail})"
            elif reason is None:
                reason = detail
        row = {
            "source": SOURCE_ID,
            "payload_url": url,
            "row_ref": ref,
            "model_key": key or None,
            "model_name": model.get("name") or key or None,
            "benchmark_key": bench or None,
            "benchmark_name": bench_name,
            "unit": unit or "score",  # only rejected rows lack a unit
            "thinking_budget": budget,
            "reasoning_effort": effort,
            # model.json's date is the file's model's, not that of a table copied into it
            "release_date": None if copied else released,
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
    priority=10,  # first-party: vendor-reported headline numbers
    frontier=True,
    headline=True,
    max_bytes=8 * 1024 * 1024,
    discover=discover,
    max_files=MAX_FILES,
)
