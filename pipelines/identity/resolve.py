"""Resolve parsed source rows to canonical (model_id, benchmark_id) and a canonical scale.

No fuzzy matching. A model name is placed, in this order, by
1. the canonical source's own ids (`benchpress_matrix`)                     route `canonical`
2. the reviewed exceptions in `model_aliases.csv` (wrong ids, codenames,    route `alias`
   humans and agent systems, moving aliases with validity windows)
3. the deterministic rules of `rules.py` + the catalogue (`models.csv`)     route `catalogue`
4. the rules alone, for a model no catalogue row covers: its id is built   route `rule`
   from (base, snapshot date, setting) - see `catalogue.py` for the grammar
Everything else stays in the output (route `unresolved`, reason in `note`), so it is counted and
reported, never silently dropped. Rows that are not about one model (human baselines, agent
systems, ensembles) are `excluded`.

A benchmark is placed by the canonical source's own ids or by `benchmark_aliases.csv` (keyed by
source, benchmark key and - where it changes what is measured - the agent or edit format).
Scales: fractions become percent; percent stays; open scales (Elo, ratings, dollars, minutes,
indexes) stay as published; a value whose unit does not fit the benchmark's, or that lies
outside the benchmark's valid range, is `rejected` with a note.

Per-row Python runs once per distinct name (a few thousand for all sources), everything else is
vectorised Polars.
"""

from __future__ import annotations

import fnmatch
import re
import unicodedata
from collections.abc import Iterable

import polars as pl

from pipelines.identity.catalogue import Catalogue, Identity
from pipelines.identity.registry import (
    CANONICAL_SOURCE,
    DISTANCE_UNITS,
    FRACTION_UNITS,
    PERCENT_UNITS,
    Registry,
)
from pipelines.identity.rules import IDENTITY_FROM, ParsedName, normalise_base, parse_name
from pipelines.identity.settings import Setting
from pipelines.sources import DISPLAY_FIELD, HEADLINE_SOURCES, NAME_FIELD, ONE_MODEL_AGENT

# Resolution of a row: the benchmark, then the model, then the value.
RESOLUTIONS = ("resolved", "unresolved_model", "unresolved_benchmark", "rejected", "excluded")
# Extra-JSON fields holding the evaluation date, most specific first (moving aliases need it).
EVAL_DATE_FIELDS = ("started_at", "run_date", "eval_date", "date", "table_date")


# Characters no leaderboard's model name uses (12,313 distinct names on the embedded default:
# none), but markup, SQL and shell fragments do; the longest real name has 157 characters.
_NOT_IN_NAMES = re.compile(r"[;'\"<>`{}|\\]")
_CLIMBS = re.compile(r"(^|/)\.\.(/|$)")
MAX_NAME_CHARS = 200


def implausible_name(name: str | None) -> str | None:
    """Why `name` cannot name a model (so the rules must not mint an id from it), or None."""
    if not name:
        return None
    if len(name) > MAX_NAME_CHARS:
        return f"not a model name: {len(name)} characters"
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in name):
        return "not a model name: control or bidirectional-format characters"
    if (bad := _NOT_IN_NAMES.search(name)) is not None:
        return f"not a model name: contains {bad.group()!r}"
    if name.startswith("/") or _CLIMBS.search(name):
        return "not a model name: a file path"
    return None


def normalise_key(name: str) -> str:
    """Lower-case, provider prefix removed, separators unified (kept for callers of the spine)."""
    return normalise_base(name)


# ------------------------------------------------------------------------ model identity
class ModelResolver:
    """Places one (source, name) at a time; `resolve()` calls it once per distinct name."""

    def __init__(self, registry: Registry):
        self.catalogue: Catalogue = registry.catalogue
        self.aliases: dict[str, list[dict[str, str]]] = {}
        for row in registry.model_aliases.iter_rows(named=True):
            self.aliases.setdefault(row["name"].casefold(), []).append(row)
        self.windowed = {
            name for name, rows in self.aliases.items() if any(r["valid_from"] for r in rows)
        }

    def needs_date(self, name: str | None) -> bool:
        if not name:
            return False
        folded = name.casefold()
        return any(folded.startswith(w) for w in self.windowed)

    # -- public ------------------------------------------------------------------------
    def resolve(
        self,
        source: str,
        name: str | None,
        reasoning_effort: str | None = None,
        thinking_budget: str | None = None,
        eval_date: str | None = None,
        display: str | None = None,
    ) -> tuple[Identity, ParsedName]:
        """The identity of one name as `source` spells it (`display` adds the date and setting
        a display name states next to an API id, as SWE-bench does)."""
        if source == CANONICAL_SOURCE:
            return self._canonical(name), ParsedName(name or "", name)
        parsed = parse_name(source, name, reasoning_effort, thinking_budget)
        if display:
            shown = parse_name(source, display)
            date = parsed.date or shown.date
            if (
                date != parsed.date
                and parsed.base
                and self.catalogue.lookup(parsed.base, date)[1] is not None
                and self.catalogue.lookup(parsed.base, parsed.date)[0] is not None
            ):
                # a display date that is no catalogued snapshot is the run's date (SWE-bench's
                # "GLM-4.5 (2025-08-22)"), not the model's: the API id alone places it
                date = parsed.date
            parsed = ParsedName(
                parsed.text,
                parsed.base,
                date,
                parsed.setting.merge(shown.setting),
                parsed.full,
                parsed.reason,
            )
        alias = self._alias(source, name, parsed, eval_date)
        if alias is not None:
            return alias, parsed
        doubt = implausible_name(name)
        if doubt is not None:  # never mint a model from markup, SQL, paths or control bytes
            return Identity(None, parsed.base, parsed.date, None, "unresolved", doubt), parsed
        return self._by_rules(source, parsed), parsed

    # -- steps ---------------------------------------------------------------------------
    def _canonical(self, name: str | None) -> Identity:
        row = self.catalogue.by_benchpress.get(name or "")
        if row is None:
            return Identity(name, name, None, None, "canonical", "not in models.csv")
        setting = row.canonical[0] if row.canonical else None
        return Identity(name, row.model, row.snapshot, setting, "canonical")

    def _alias(
        self, source: str, name: str | None, parsed: ParsedName, eval_date: str | None
    ) -> Identity | None:
        candidates: list[dict[str, str]] = []
        keys = {(name or "").strip().casefold()}
        if parsed.base and parsed.date is None:
            keys.add(parsed.base)
        for key in keys:
            for row in self.aliases.get(key, []):
                if row["source"] in (source, "*"):
                    candidates.append(row)
        if not candidates:
            return None
        # a source's own row wins over a `*` row
        own = [r for r in candidates if r["source"] == source]
        candidates = own or candidates
        windowed = [r for r in candidates if r["valid_from"] or r["valid_to"]]
        if windowed and parsed.date is not None:
            # a dated name is not the moving alias: the rules place it
            candidates = [r for r in candidates if r not in windowed]
            if not candidates:
                return None
        elif windowed:
            day = (eval_date or "")[:10]
            inside = [
                r
                for r in windowed
                if day
                and (not r["valid_from"] or r["valid_from"] <= day)
                and (not r["valid_to"] or day < r["valid_to"])
            ]
            if not inside:
                when = f"evaluated {day}" if day else "no evaluation date"
                return Identity(
                    None,
                    parsed.base,
                    parsed.date,
                    parsed.setting.canonical(),
                    "unresolved",
                    f"moving alias {name!r} ({when}) outside every validity window",
                )
            candidates = inside
        row = candidates[0]
        if row["action"] == "exclude":
            return Identity(None, parsed.base, None, None, "excluded", row["note"] or "not a model")
        if row["action"] == "unresolved":
            return Identity(
                None, parsed.base, parsed.date, None, "unresolved", row["note"] or "reviewed"
            )
        return self._target(row["model_id"], parsed, source)

    def _target(self, target: str, parsed: ParsedName, source: str) -> Identity:
        stem, _, fixed = target.partition("@")
        row = self.catalogue.by_model.get(stem) or self.catalogue.by_benchpress.get(stem)
        setting = fixed or parsed.setting.canonical()
        if row is None:
            return Identity(target, stem, parsed.date, fixed or None, "alias")
        if setting:
            ident = self.catalogue.identity_for(row, setting, source in HEADLINE_SOURCES, "alias")
            return ident
        return Identity(target, row.model, row.snapshot, None, "alias")

    def _by_rules(self, source: str, parsed: ParsedName) -> Identity:
        if parsed.base is None:
            route = (
                "excluded"
                if parsed.reason and "several models" in parsed.reason
                else ("unresolved")
            )
            return Identity(None, None, None, None, route, parsed.reason)
        base, date, setting = parsed.base, parsed.date, parsed.setting
        if base.endswith("-latest") and date is None and "/" not in base:
            return Identity(
                None, base, None, setting.canonical(), "unresolved", "moving alias (*-latest)"
            )
        headline = source in HEADLINE_SOURCES
        # a model whose name ends in a setting word (kimi-k2-thinking) is catalogued whole
        if parsed.full and parsed.full != base and parsed.full in self.catalogue.by_key:
            row, _ = self.catalogue.lookup(parsed.full, None)
            if row is not None:
                quant = Setting(quant=setting.quant).canonical()
                return self.catalogue.identity_for(row, quant, headline, "catalogue")
        row, reason = self.catalogue.lookup(base, date)
        if row is not None:
            return self.catalogue.identity_for(row, setting.canonical(), headline, "catalogue")
        if reason is not None:
            return Identity(None, base, date, setting.canonical(), "unresolved", reason)
        # not catalogued: the rules alone give the id
        if date is not None and len(date) != 10:
            return Identity(
                None,
                base,
                date,
                setting.canonical(),
                "unresolved",
                f"month-level date {date} and {base!r} is not catalogued",
            )
        model = f"{base}-{date.replace('-', '')}" if date else base
        if model in self.catalogue.reserved:
            return Identity(
                None,
                base,
                date,
                setting.canonical(),
                "unresolved",
                f"{model!r} is a catalogued id that this name does not denote",
            )
        canonical = setting.canonical()
        model_id = f"{model}@{canonical}" if canonical else model
        return Identity(model_id, base, date, canonical, "rule")


# --------------------------------------------------------------------- benchmark identity
class BenchmarkResolver:
    def __init__(self, registry: Registry):
        self.known = set(registry.benchmarks["benchmark_id"].to_list())
        self.rows: dict[tuple[str, str], list[dict[str, str]]] = {}
        for row in registry.benchmark_aliases.iter_rows(named=True):
            self.rows.setdefault((row["source"], row["benchmark_key"]), []).append(row)

    def resolve(
        self, source: str, key: str | None, agent: str | None
    ) -> tuple[str | None, str, str | None]:
        """(benchmark_id, route, note)."""
        if key is None:
            return None, "unresolved", "no benchmark key"
        if source == CANONICAL_SOURCE:
            if key in self.known:
                return key, "canonical", None
            return None, "unresolved", f"{key!r} is not in benchmarks.csv"
        rows = self.rows.get((source, key))
        if not rows:
            return None, "unresolved", f"{source} benchmark {key!r} is not in benchmark_aliases.csv"
        folded = (agent or "").casefold()
        specific = [
            r for r in rows if r["agent"] and fnmatch.fnmatch(folded, r["agent"].casefold())
        ]
        chosen = specific[0] if specific else next((r for r in rows if not r["agent"]), None)
        if chosen is None:
            return None, "unresolved", f"{source} {key!r} has no mapping for agent {agent!r}"
        if not chosen["benchmark_id"]:
            return None, "unmapped", chosen["note"] or "deliberately not mapped"
        return chosen["benchmark_id"], "alias", None


# ------------------------------------------------------------------------------ the frame
def _name_columns(scores: pl.DataFrame) -> pl.DataFrame:
    """The model name each source's grammar is read from (per source, `NAME_FIELD`, or per row,
    `extra["identity_from"]`), the display name read beside it (`DISPLAY_FIELD`), plus the
    one-model runs of leaderboards of agent systems (`ONE_MODEL_AGENT`)."""
    source = pl.col("source")
    name = pl.col("model_key")
    for src, field in NAME_FIELD.items():
        name = pl.when(source == src).then(pl.coalesce(field, "model_key")).otherwise(name)
    by_name = (pl.col("extra").str.json_path_match(f"$.{IDENTITY_FROM}") == "model_name").fill_null(
        False
    ) & pl.col("model_name").is_not_null()
    name = pl.when(by_name).then(pl.col("model_name")).otherwise(name)
    display = pl.lit(None, pl.String)
    for src, field in DISPLAY_FIELD.items():
        display = pl.when((source == src) & ~by_name).then(pl.col(field)).otherwise(display)
    date = pl.coalesce(
        [pl.col("extra").str.json_path_match(f"$.{f}").str.slice(0, 10) for f in EVAL_DATE_FIELDS]
    )
    frame = scores.with_columns(name.alias("_name"), date.alias("eval_date"))
    # leaderboards of agent systems (SWE-bench): only their one-model agent's runs (bash-only
    # mini-swe-agent) are one model; their `Model:` tag holds the API id and the display name
    # the date and reasoning effort
    is_systems = source.is_in(list(ONE_MODEL_AGENT))
    per_model = pl.lit(False)
    for src, agent in ONE_MODEL_AGENT.items():
        runs = (source == src) & pl.col("agent").str.starts_with(agent).fill_null(False)
        per_model = per_model | runs
    tags = (
        pl.when(is_systems)
        .then(pl.col("extra").str.json_path_match("$.models"))
        .str.json_decode(pl.List(pl.String))
    )
    frame = frame.with_columns(tags.alias("_tags"))
    one_tag = pl.col("_tags").list.len() == 1
    return frame.with_columns(
        pl.when(per_model & one_tag)
        .then(pl.col("_tags").list.first())
        .when(is_systems)
        .then(pl.lit(None, pl.String))
        .otherwise(pl.col("_name"))
        .alias("_name"),
        # the Verified board repeats the bash-only runs as "mini-SWE-agent + <model>"
        pl.when(per_model)
        .then(pl.col("model_name").str.replace(r"^.*\+\s*", ""))
        .otherwise(display)
        .alias("_display"),
        (is_systems & ~per_model).alias("_system"),
    ).drop("_tags")


MODEL_KEYS = [
    "source",
    "_name",
    "_display",
    "reasoning_effort",
    "thinking_budget",
    "_date",
    "_system",
]


def _with_alias_dates(frame: pl.DataFrame, resolver: ModelResolver) -> pl.DataFrame:
    """The evaluation date, kept only for names a validity-windowed alias may match."""
    names = frame.select(pl.col("_name").unique()).to_series().to_list()
    dated = [n for n in names if resolver.needs_date(n)]
    return frame.with_columns(
        pl.when(pl.col("_name").is_in(dated)).then(pl.col("eval_date")).alias("_date")
    )


def identify_models(frame: pl.DataFrame, resolver: ModelResolver) -> pl.DataFrame:
    """One row per distinct name -> identity columns (joined back by `resolve`)."""
    keys = MODEL_KEYS
    distinct = frame.select(keys).unique()
    out: list[dict[str, object]] = []
    for row in distinct.iter_rows(named=True):
        if row["_system"]:
            ident = Identity(None, None, None, None, "excluded", "an agent system, not one model")
            stated = None
        else:
            ident, parsed = resolver.resolve(
                row["source"],
                row["_name"],
                row["reasoning_effort"],
                row["thinking_budget"],
                row["_date"],
                row["_display"],
            )
            stated = parsed.setting.canonical() if row["source"] != CANONICAL_SOURCE else None
        out.append(
            {
                **row,
                "model_id": ident.model_id,
                "model_base": ident.base,
                "model_snapshot": ident.snapshot,
                "model_setting": ident.setting,
                "model_route": ident.route,
                "model_note": ident.note,
                "setting": stated,
            }
        )
    schema = {k: distinct.schema[k] for k in keys} | {
        c: pl.String()
        for c in (
            "model_id",
            "model_base",
            "model_snapshot",
            "model_setting",
            "model_route",
            "model_note",
            "setting",
        )
    }
    return pl.DataFrame(out, schema=schema, orient="row")


def identify_benchmarks(frame: pl.DataFrame, resolver: BenchmarkResolver) -> pl.DataFrame:
    keys = ["source", "benchmark_key", "agent"]
    distinct = frame.select(keys).unique()
    rows = []
    for source, key, agent in distinct.iter_rows():
        benchmark_id, route, note = resolver.resolve(source, key, agent)
        rows.append((source, key, agent, benchmark_id, route, note))
    return pl.DataFrame(
        rows,
        schema={
            "source": pl.String,
            "benchmark_key": pl.String,
            "agent": pl.String,
            "benchmark_id": pl.String,
            "benchmark_route": pl.String,
            "benchmark_note": pl.String,
        },
        orient="row",
    )


OUTPUT_COLUMNS: tuple[str, ...] = (
    "source",
    "parse_id",
    "payload_url",
    "payload_sha256",
    "fetched_at",
    "row_ref",
    "model_key",
    "model_name",
    "benchmark_key",
    "benchmark_name",
    "setting",
    "model_id",
    "benchmark_id",
    "raw_value",
    "raw_unit",
    "score",
    "scale",
    "resolution",
    "note",
    # 002_identity
    "model_base",
    "model_snapshot",
    "model_setting",
    "model_route",
    "benchmark_route",
    "reasoning_effort",
    "thinking_budget",
    "agent",
    "eval_date",
    "extra",
    # 005_release_dates: the model's release date as the row's source states it
    "release_date",
)


def resolve(scores: pl.DataFrame, registry: Registry) -> pl.DataFrame:
    """Source rows (SCORE_SCHEMA plus provenance) -> normalized rows with resolution status."""
    resolver = ModelResolver(registry)
    if "release_date" not in scores.columns:  # rows parsed before sources stated release dates
        scores = scores.with_columns(pl.lit(None, pl.String).alias("release_date"))
    frame = _with_alias_dates(_name_columns(scores), resolver)
    models = identify_models(frame, resolver)
    frame = frame.join(models, on=MODEL_KEYS, how="left", nulls_equal=True)
    benches = identify_benchmarks(frame, BenchmarkResolver(registry))
    frame = frame.join(
        benches, on=["source", "benchmark_key", "agent"], how="left", nulls_equal=True
    )
    bench_facts = registry.benchmarks.select(
        "benchmark_id",
        "scale",
        pl.col("unit").alias("bench_unit"),
        pl.col("direction").alias("_direction"),
        "lower",
        "upper",
    )
    frame = frame.join(bench_facts, on="benchmark_id", how="left")
    return _finish(frame)


def _finish(frame: pl.DataFrame) -> pl.DataFrame:
    unit, bench_unit, value = pl.col("unit"), pl.col("bench_unit"), pl.col("value")
    to_percent = bench_unit == "percent"
    distance_up = to_percent & unit.is_in(list(DISTANCE_UNITS)) & (pl.col("_direction") == "higher")
    factor = (
        pl.when(to_percent & unit.is_in(list(FRACTION_UNITS | DISTANCE_UNITS)))
        .then(pl.when(distance_up).then(-100.0).otherwise(100.0))
        .when(to_percent & unit.is_in(list(PERCENT_UNITS)))
        .then(1.0)
        .when(~to_percent & (unit == bench_unit))
        .then(1.0)
    )
    offset = pl.when(distance_up).then(100.0).otherwise(0.0)
    frame = frame.with_columns((value * factor + offset).alias("score"), factor.alias("_factor"))
    score = pl.col("score")
    unit_mismatch = pl.col("benchmark_id").is_not_null() & pl.col("_factor").is_null()
    out_of_range = (score < pl.col("lower")) | (score > pl.col("upper"))
    unmapped = pl.col("benchmark_route") == "unmapped"
    resolution = (
        pl.when(value.is_null())
        .then(pl.lit("rejected"))
        .when((pl.col("model_route") == "excluded") | unmapped)
        .then(pl.lit("excluded"))
        .when(pl.col("benchmark_id").is_null())
        .then(pl.lit("unresolved_benchmark"))
        .when(pl.col("model_id").is_null())
        .then(pl.lit("unresolved_model"))
        .when(unit_mismatch | out_of_range)
        .then(pl.lit("rejected"))
        .otherwise(pl.lit("resolved"))
    )
    note = (
        pl.when(value.is_null())
        .then(pl.col("extra").str.json_path_match("$.rejected"))
        .when(pl.col("model_route") == "excluded")
        .then(pl.col("model_note"))
        .when(unmapped | pl.col("benchmark_id").is_null())
        .then(pl.col("benchmark_note"))
        .when(pl.col("model_id").is_null())
        .then(pl.col("model_note"))
        .when(unit_mismatch)
        .then(pl.format("unit {} does not fit benchmark unit {}", unit, bench_unit))
        .when(out_of_range)
        .then(
            pl.format("{} outside the valid range {}..{}", score, pl.col("lower"), pl.col("upper"))
        )
        .otherwise(pl.col("model_note"))
    )
    frame = frame.with_columns(
        resolution.alias("resolution"),
        note.alias("note"),
        pl.when(unit_mismatch).then(None).otherwise(score).alias("score"),
        value.alias("raw_value"),
        unit.alias("raw_unit"),
        pl.col("model_route").fill_null("unresolved"),
        pl.col("benchmark_route").fill_null("unresolved"),
    )
    return frame.select(OUTPUT_COLUMNS)


# --------------------------------------------------------------------------- convenience
def resolve_model_name(
    source: str,
    name: str,
    registry: Registry,
    *,
    reasoning_effort: str | None = None,
    thinking_budget: str | None = None,
    eval_date: str | None = None,
    display: str | None = None,
) -> Identity:
    """The identity one source's model name resolves to (what `resolve` does per row)."""
    return ModelResolver(registry).resolve(
        source, name, reasoning_effort, thinking_budget, eval_date, display
    )[0]


def summarise(normalized: pl.DataFrame, sources: Iterable[str] | None = None) -> pl.DataFrame:
    """Per source: rows by resolution, the resolution rate and the unresolved share."""
    frame = (
        normalized if sources is None else normalized.filter(pl.col("source").is_in(list(sources)))
    )
    counts = frame.group_by("source").agg(
        pl.len().alias("rows"),
        *[(pl.col("resolution") == r).sum().alias(r) for r in RESOLUTIONS],
        pl.col("model_key")
        .filter(pl.col("resolution") == "unresolved_model")
        .n_unique()
        .alias("unresolved_model_names"),
        pl.col("benchmark_key")
        .filter(pl.col("resolution") == "unresolved_benchmark")
        .n_unique()
        .alias("unresolved_benchmark_names"),
    )
    placeable = pl.col("rows") - pl.col("rejected") - pl.col("excluded")
    return counts.with_columns(
        (pl.col("resolved") / pl.col("rows")).round(4).alias("resolution_rate"),
        pl.when(placeable > 0)
        .then(((pl.col("unresolved_model") + pl.col("unresolved_benchmark")) / placeable).round(4))
        .otherwise(0.0)
        .alias("unresolved_share"),
    ).sort("source")
