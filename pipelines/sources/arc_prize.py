"""ARC Prize leaderboard (arcprize.org): normalised JSON tables behind the site's chart.

`evaluations.json` holds one record per (dataset, model) score and is joined here with
`models.json` (display name, type, release date, provider), `datasets.json` (benchmark names) and
`providers.json` (organisation names). `score` is the fraction of tasks solved (0-1);
`costPerTask` is USD per task, ARC-AGI-3 rows give a total `cost` instead.

An evaluation is one (dataset, model) result. The file repeats one exactly (`v2_Semi_Private` x
`gpt-5-2025-08-07-low`): the copy is kept, marked `duplicate_of` the first. The same pair scored
twice with different results is a ParseError naming both records, as the file cannot say which
holds.

The `leaderboard/v{1,2,3}.json` files are not fetched: they are a denormalised subset of the same
evaluations (headline semi-private datasets only) with the same model fields, so they add nothing
but a generation timestamp. Their one useful lesson is replicated: for a model id listed twice in
`models.json` with conflicting attributes, the site uses the LAST entry.

`modelReleaseDate` (`2025-01-31T00:00:00.000Z`) is the row's `release_date` (as `2025-01-31`),
except for systems built on a model (`modelType` Refinement or Custom: `Gemini 3 Pro (Refine.)`
dated 2025-12-04 is the refinement's date, not Gemini 3 Pro's).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from pipelines.sources.base import (
    ParseError,
    Source,
    extra_json,
    finite_value,
    load_json,
    scores_frame,
    stated_date,
)

SOURCE_ID = "arc_prize"
BASE = "https://arcprize.org/media/data"
EVALUATIONS_URL = f"{BASE}/evaluations.json"
MODELS_URL = f"{BASE}/models.json"
DATASETS_URL = f"{BASE}/datasets.json"
PROVIDERS_URL = f"{BASE}/providers.json"
TOL = 1e-9

MODEL_FACTS = {
    "modelType": "model_type",
    "modelGroup": "model_group",
    "modelReleaseDate": "release_date",
    "paperUrl": "paper_url",
    "codeUrl": "code_url",
    "dataUrl": "data_url",
    "featured": "featured",
    "notes": "notes",
}
# `modelType`s of systems built on a model (a refinement loop around Grok 4, a Kaggle entry):
# their `modelReleaseDate` is the system's, not a model's release date.
SYSTEM_TYPES = frozenset({"Refinement", "Custom"})


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _table(url: str, payloads: Mapping[str, bytes], required: bool = True) -> list[dict] | None:
    if url not in payloads:
        if required:
            raise ParseError(SOURCE_ID, url, "payload missing")
        return None
    doc = load_json(SOURCE_ID, url, payloads[url])
    if not isinstance(doc, list):
        raise ParseError(SOURCE_ID, url, f"expected a JSON list, got {type(doc).__name__}")
    name = url.rsplit("/", 1)[-1].removesuffix(".json")
    for i, item in enumerate(doc):
        if url != EVALUATIONS_URL and (not isinstance(item, dict) or _text(item.get("id")) is None):
            raise ParseError(SOURCE_ID, url, "entry without an 'id'", f"{name}[{i}]")
    return doc


def _index(entries: list[dict] | None) -> tuple[dict[str, dict], dict[str, int]]:
    """id -> entry (the last one wins, as on the site) and id -> number of entries."""
    by_id: dict[str, dict] = {}
    counts: dict[str, int] = {}
    for entry in entries or []:
        key = _text(entry["id"]) or ""
        by_id[key] = entry
        counts[key] = counts.get(key, 0) + 1
    return by_id, counts


def _conflicting(entries: list[dict], key: str) -> bool:
    same = [e for e in entries if _text(e.get("id")) == key]
    return any(e != same[-1] for e in same)


def _cost(url: str, raw: object, ref: str) -> float | str | None:
    """USD figure, None when absent or '-' (prototype files), else the raw text for the record."""
    if isinstance(raw, str) and raw.strip() in {"", "-"}:
        return None
    if isinstance(raw, str):
        try:
            return finite_value(SOURCE_ID, url, raw, ref)
        except ParseError:
            return raw.strip()
    return finite_value(SOURCE_ID, url, raw, ref)


def parse(payloads: Mapping[str, bytes]) -> pl.DataFrame:
    evaluations = _table(EVALUATIONS_URL, payloads)
    model_list = _table(MODELS_URL, payloads) or []
    models, model_counts = _index(model_list)
    datasets, _ = _index(_table(DATASETS_URL, payloads))
    providers, _ = _index(_table(PROVIDERS_URL, payloads, required=False))
    seen: dict[tuple[object, ...], int] = {}
    pairs: dict[tuple[str, str], tuple[int, tuple[object, ...]]] = {}
    rows: list[dict[str, object]] = []
    for i, ev in enumerate(evaluations or []):
        ref = f"evaluations[{i}]"
        common: dict[str, object] = {
            "source": SOURCE_ID,
            "payload_url": EVALUATIONS_URL,
            "row_ref": ref,
            "unit": "fraction",
        }
        if not isinstance(ev, dict):
            reason = f"evaluation is a {type(ev).__name__}, not an object"
            rows.append({**common, "value": None, "extra": extra_json({"rejected": reason})})
            continue
        model_id, dataset_id = _text(ev.get("modelId")), _text(ev.get("datasetId"))
        model = models.get(model_id or "", {})
        dataset = datasets.get(dataset_id or "", {})
        provider_id = _text(model.get("providerId"))
        provider = providers.get(provider_id or "", {})
        facts: dict[str, object] = {
            "cost_per_task": _cost(EVALUATIONS_URL, ev.get("costPerTask"), f"{ref}.costPerTask"),
            "cost": _cost(EVALUATIONS_URL, ev.get("cost"), f"{ref}.cost"),
            "display": ev.get("display") if isinstance(ev.get("display"), bool) else None,
            "results_url": _text(ev.get("resultsUrl")),
            "provider_id": provider_id,
            "organization": _text(provider.get("displayName")) or provider_id,
        }
        for field, target in MODEL_FACTS.items():
            value = model.get(field)
            facts[target] = _text(value) if isinstance(value, str) else value
        if not isinstance(facts["featured"], bool):
            facts["featured"] = None
        if model_id and model_id not in models:
            facts["unknown_model"] = True
        if dataset_id and dataset_id not in datasets:
            facts["unknown_dataset"] = True
        if model_id and model_counts.get(model_id, 0) > 1:
            facts["model_entries"] = model_counts[model_id]
            if _conflicting(model_list, model_id):
                facts["model_entries_conflict"] = (
                    "models.json lists this id with different attributes; "
                    "the last entry is used, as on arcprize.org"
                )
        value = None
        missing = [k for k, v in (("modelId", model_id), ("datasetId", dataset_id)) if v is None]
        if missing:
            facts["rejected"] = f"missing {', '.join(missing)}"
        elif ev.get("score") is None:
            facts["rejected"] = "missing score"
        else:
            value = finite_value(SOURCE_ID, EVALUATIONS_URL, ev["score"], f"{ref}.score")
            if value is None:
                facts["rejected"] = "blank score"
            elif not -TOL <= value <= 1.0 + TOL:
                raise ParseError(SOURCE_ID, EVALUATIONS_URL, f"score={value} outside 0-1", ref)
        if "rejected" in facts and isinstance(ev.get("score"), int | float | str):
            facts["published_value"] = ev.get("score")
        identity = (dataset_id, model_id, ev.get("score"), ev.get("costPerTask"), ev.get("cost"))
        if model_id and dataset_id:
            # only scored records compete: one without a score is kept as rejected anyway
            first, first_identity = (
                pairs.setdefault((dataset_id, model_id), (i, identity))
                if value is not None
                else (i, identity)
            )
            if first_identity != identity:
                raise ParseError(
                    SOURCE_ID,
                    EVALUATIONS_URL,
                    f"model {model_id!r} on {dataset_id!r} appears twice with different results:"
                    f" evaluations[{first}] and {ref}",
                    ref,
                )
            if identity in seen:
                facts["duplicate_of"] = f"evaluations[{seen[identity]}]"
            else:
                seen[identity] = i
        rows.append(
            {
                **common,
                "model_key": model_id,
                "model_name": _text(model.get("displayName")) or model_id,
                "benchmark_key": dataset_id,
                "benchmark_name": _text(dataset.get("displayName")) or dataset_id,
                "value": value,
                "extra": extra_json(facts),
                "release_date": (
                    None
                    if model.get("modelType") in SYSTEM_TYPES
                    else stated_date(model.get("modelReleaseDate"))
                ),
            }
        )
    return scores_frame(rows)


SOURCE = Source(
    id=SOURCE_ID,
    title="ARC Prize leaderboard (ARC-AGI-1/2/3)",
    homepage="https://arcprize.org/leaderboard",
    urls=(EVALUATIONS_URL, MODELS_URL, DATASETS_URL, PROVIDERS_URL),
    parse=parse,
    licence="No licence stated; data belongs to ARC Prize Foundation (public, attribution "
    "required, terms unclear)",
    attribution="ARC Prize Foundation, ARC-AGI leaderboard, https://arcprize.org/leaderboard",
    priority=30,
    frontier=True,
    run_costs=True,
    max_bytes=8 * 1024 * 1024,
)
