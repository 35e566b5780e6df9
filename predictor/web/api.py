"""The JSON API behind the page: pure functions from request parameters to JSON-able dicts.

It mirrors the Python API (`BenchPress.predict`, `.scores()`, `.resolve_model`, ...) and passes
its error messages through unchanged: an unknown name lists close matches, a bad score says
what is wrong with it. `handle(catalog, path, params)` routes `/api/...` paths; the HTTP layer
(`predictor.web.server`) only moves bytes.

Private models (`private:NAME`) are accepted wherever a known model is (`/api/compare`,
`/api/models/<id>`) and have endpoints of their own (`/api/private`, `/api/runs`); the
endpoints that describe a published snapshot (`/api/snapshot`, `/api/matrix`, `/api/cell`)
never mention them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from datetime import datetime
from typing import Any

from predictor.api import BenchPress, FractionScoresWarning
from predictor.harnesses import harnesses
from predictor.missing_probes import MissingProbesWarning
from predictor.names.resolve import AmbiguousNameError, UnknownNameError
from predictor.private import PrivateModel
from predictor.trust.profiles import PROFILES, profile
from predictor.trust.suspicious import DEFAULT_THRESHOLD
from predictor.util.text_safety import quoted
from predictor.web import figures, params, picker, private, standings, uploads
from predictor.web.catalog import Catalog
from predictor.web.errors import ApiError, bad_request, not_found
from predictor.web.params import Params

SUGGESTED_PROBES = 5


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, float):
        return figures.number(value)
    return value


def _record(row: dict[str, Any]) -> dict[str, Any]:
    return {key: _json_value(value) for key, value in row.items()}


def _resolve(
    resolver: Callable[[str], str], name: str, status: int = 400, parameter: str | None = None
) -> str:
    """A canonical id, or the resolver's own message (with close matches) as an HTTP error,
    naming the query `parameter` when given."""
    try:
        return resolver(name)
    except UnknownNameError as exc:
        where = f" (parameter {parameter!r})" if parameter else ""
        raise ApiError(status, f"{exc}{where}") from None
    except TypeError as exc:
        raise bad_request(str(exc)) from None


def _known_model(
    catalog: Catalog,
    bench: BenchPress,
    name: str,
    status: int = 400,
    private_models: list[PrivateModel] | None = None,
) -> str | PrivateModel:
    """A snapshot model's id, or a private model: `private:NAME` is private only; a bare name
    is a snapshot model first, else a private model of exactly that name."""
    if private.explicit(name):
        models = catalog.private_models() if private_models is None else private_models
        found = private.lookup(models, name)
        if found is None:
            known = ", ".join(m.name for m in models[:10]) or "none"
            raise ApiError(
                status,
                f"no private model {quoted(name[len(private.PREFIX) :])}; private models: {known}",
            )
        return found
    try:
        return _resolve(bench.resolve_model, name, status=status)
    except ApiError:
        models = catalog.private_models() if private_models is None else private_models
        found = private.lookup(models, name)
        if found is None:
            raise
        return found


def _bench(catalog: Catalog, query: Params) -> BenchPress:
    return catalog.load(params.version(query))


def _model_row(bench: BenchPress, model_id: str) -> dict[str, Any]:
    rows = bench.snapshot.models.filter(bench.snapshot.models["model_id"] == model_id)
    return _record(rows.row(0, named=True))


def _benchmark_row(bench: BenchPress, benchmark_id: str) -> dict[str, Any]:
    table = bench.snapshot.benchmarks
    return _record(table.filter(table["benchmark_id"] == benchmark_id).row(0, named=True))


# ------------------------------------------------------------------------------- endpoints
def versions(catalog: Catalog, query: Params) -> dict[str, Any]:
    """Published versions, newest first, with the counts a chooser wants to show."""
    params.check_allowed(query, [], "/api/versions")
    listed = []
    for version in catalog.versions():
        manifest = catalog.manifest(version)
        counts = manifest.get("counts", {})
        listed.append(
            {
                "version": version,
                "published_at": manifest.get("published_at"),
                "content_hash": manifest.get("content_hash"),
                "parent": manifest.get("parent"),
                "models": counts.get("models"),
                "benchmarks": counts.get("benchmarks"),
                "cells": counts.get("cells"),
                "store": catalog.store_of(version),
            }
        )
    return {"latest": listed[0]["version"] if listed else None, "versions": listed}


def manifest_summary(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest without bulky per-cell lists (held-out pairs are served by /api/plots)."""
    summary = dict(manifest)
    quality = dict(summary.get("quality", {}))
    quality.pop("holdout_pairs", None)
    summary["quality"] = quality
    return summary


def snapshot(catalog: Catalog, query: Params) -> dict[str, Any]:
    """What a version holds: manifest summary, models and benchmarks (`probe`: usable as one)."""
    params.check_allowed(query, ["version"], "/api/snapshot")
    bench = _bench(catalog, query)
    probes = set(bench.fit_benchmarks_)
    return {
        "version": bench.version,
        "manifest": manifest_summary(bench.manifest),
        "fit": figures.fit_summary(bench.manifest, bench.snapshot.fit),
        # the release dates a prediction may be given (the page's date picker shows them)
        "release_date_range": list(bench.release_date_range or []) or None,
        "models": [_record(r) for r in bench.snapshot.models.iter_rows(named=True)],
        "benchmarks": [
            {**_record(r), "probe": r["benchmark_id"] in probes}
            for r in bench.snapshot.benchmarks.iter_rows(named=True)
        ],
    }


def _side(bench: BenchPress, query: Params) -> dict[str, str | None]:
    """`model`, `family`, `release_date`, `base` for `BenchPress.predict` / `side_for`
    (`params.side`): a private model's `private:` prefix is dropped (its name is what the
    model is called); an unknown `base` is a 400 naming the parameter, with close matches."""
    side = params.side(query)
    named = side["model"]
    if named is not None and private.explicit(named):
        side["model"] = named[len(private.PREFIX) :].strip() or None
    if side["base"] is not None:
        _resolve(bench.resolve_model, side["base"], parameter="base")
    return side


def predict(catalog: Catalog, query: Params) -> dict[str, Any]:
    """`BenchPress.predict`: one row per fitted benchmark, fields of `Prediction.as_dict`;
    `side`: the family and release date the fold-in used and why (`SideUsed.as_dict`), from
    `model`, `family`, `release_date` and `base` as in Python; `stderr`: the standard error
    each probe was given with (`scores=mmlu_pro=74±1.5`, or `[74, 1.5]` in a JSON body),
    which the fold-in weighs it by."""
    params.check_allowed(
        query,
        ["version", "scores", "level", "targets", *params.SIDE],
        "/api/predict",
    )
    bench = _bench(catalog, query)
    probes = params.scores(query)
    level = params.level(query)
    side = _side(bench, query)
    wanted = params.names(query, "targets")  # optional: a profile or benchmarks, as in Python
    targets = (wanted[0] if len(wanted) == 1 else wanted) if wanted else None
    told = (FractionScoresWarning, MissingProbesWarning)
    with warnings.catch_warnings(record=True) as caught:
        # what the CLI and Python warn about (fractions converted to percent, a probe left
        # out), the page shows
        for category in told:
            warnings.simplefilter("always", category)
        try:
            predictions = bench.predict(probes, level=level, targets=targets, **side)  # type: ignore[arg-type]
        except (UnknownNameError, ValueError, TypeError) as exc:
            raise bad_request(str(exc)) from None
    said = [str(w.message) for w in caught if issubclass(w.category, told)]
    resolved = {
        bench.resolve_benchmark(name): float(v[0] if isinstance(v, list | tuple) else v)  # type: ignore[arg-type]
        for name, v in probes.items()
    }
    return {
        "version": bench.version,
        "level": level,
        "probes": resolved,
        # each probe's standard error where it came with one (`74±1.5`, `[74, 1.5]`)
        "stderr": predictions.stderr,
        "warnings": list(dict.fromkeys(said)),
        "side": _finite(predictions.side.as_dict()),
        "predictions": [
            {k: _json_value(v) for k, v in predictions[b].as_dict().items()}
            for b in sorted(predictions)
        ],
    }


def side(catalog: Catalog, query: Params) -> dict[str, Any]:
    """`GET /api/side?model=&base=`: the family and release date a prediction for this model
    would use, and why, before any score is given: `BenchPress.side_for(...)[0].as_dict()`
    with the snapshot's `version`. A date to be inferred from the probes has no value yet.
    `family` and `release_date` are accepted (and checked) as in `/api/predict`."""
    params.check_allowed(query, ["version", *params.SIDE], "/api/side")
    bench = _bench(catalog, query)
    wanted = _side(bench, query)
    try:
        used = bench.side_for(**wanted)[0]  # type: ignore[arg-type]
    except (UnknownNameError, ValueError, TypeError) as exc:
        raise bad_request(str(exc)) from None
    return {"version": bench.version, **_finite(used.as_dict())}


def suggested_probes(bench: BenchPress, model_id: str, k: int = SUGGESTED_PROBES) -> list[str]:
    """Up to `k` of the model's observed, fitted benchmarks, the most widely reported first:
    the scores a person is most likely to have for a new model too."""
    fitted = set(bench.fit_benchmarks_)
    reported = dict(bench.snapshot.benchmarks.select("benchmark_id", "n_cells").iter_rows())
    cells = bench.snapshot.cells
    observed = cells.filter(cells["model_id"] == model_id)["benchmark_id"].to_list()
    usable = sorted((b for b in set(observed) if b in fitted), key=lambda b: (-reported[b], b))
    return usable[:k]


def model(catalog: Catalog, query: Params, name: str) -> dict[str, Any]:
    """A known model: its facts, observed scores with provenance, and suggested probes."""
    params.check_allowed(query, ["version"], "/api/models/<id>")
    bench = _bench(catalog, query)
    found = _known_model(catalog, bench, name, status=404)
    if isinstance(found, PrivateModel):
        return private.model_answer(bench, found, SUGGESTED_PROBES)
    model_id = found
    scores = bench.scores()
    cells = scores.filter(scores["model_id"] == model_id).sort("benchmark_id")
    fitted = set(bench.fit_benchmarks_)
    return {
        "version": bench.version,
        "model": _model_row(bench, model_id),
        "scores": [
            {**_record(r), "probe": r["benchmark_id"] in fitted}
            for r in cells.drop("model_id").iter_rows(named=True)
        ],
        "suggested_probes": suggested_probes(bench, model_id),
    }


def matrix(catalog: Catalog, query: Params) -> dict[str, Any]:
    """The published matrix (observed cells) beside the fit's completion of every cell."""
    params.check_allowed(query, ["version"], "/api/matrix")
    bench = _bench(catalog, query)
    return {
        "version": bench.version,
        **figures.matrix(bench),
        "suspicious": figures.suspicious(bench),
        "suspicious_threshold_z": DEFAULT_THRESHOLD,
    }


def _fitted_cells(
    bench: BenchPress, model_id: str, level: float
) -> dict[str, dict[str, Any]] | None:
    """Every fitted benchmark for a known model: observed cells as given, the rest completed."""
    if model_id not in bench.fit_models_:
        return None
    i = bench.fit_models_.index(model_id)
    means, low, high = bench.fitted_values(keep_observed=True, level=level)
    mean = means[i]
    return {
        b: {
            "score": figures.number(mean[j]),
            "low": figures.number(min(low[i, j], mean[j])),
            "high": figures.number(max(high[i, j], mean[j])),
            "observed": bool(bench.completer_.observed_[i, j]),
        }
        for j, b in enumerate(bench.fit_benchmarks_)
    }


def _folded_cells(bench: BenchPress, model_id: str, level: float) -> dict[str, dict[str, Any]]:
    """A model outside the fit: its observed fitted-benchmark scores folded in as probes,
    with its own release date and family (a model the snapshot knows)."""
    cells = bench.snapshot.cells
    own = cells.filter(cells["model_id"] == model_id)
    fitted = set(bench.fit_benchmarks_)
    probes = {b: s for b, s in own.select("benchmark_id", "score").iter_rows() if b in fitted}
    if not probes:
        return {}
    return {
        b: {"score": p.score, "low": p.low, "high": p.high, "observed": p.observed}
        for b, p in bench.predict(probes, level=level, model=model_id).items()
    }


def _column(bench: BenchPress, model_id: str, level: float) -> dict[str, dict[str, Any]]:
    """A compare column: the fit's cells for a fitted model, else its scores folded in."""
    cells = _fitted_cells(bench, model_id, level)
    return _folded_cells(bench, model_id, level) if cells is None else cells


def _unresolved(bench: BenchPress, name: str) -> tuple[str, list[str]] | None:
    """("ambiguous", the ids the name could mean: `o3` gives o3-high, o3@low, ...) or
    ("unknown", the close matches of a misspelt name); None when the name resolves (or is
    not a model name at all)."""
    try:
        bench.resolve_model(name)
    except AmbiguousNameError as exc:
        return "ambiguous", list(exc.suggestions)
    except UnknownNameError as exc:
        return "unknown", list(exc.suggestions)
    except TypeError:
        return None
    return None


def compare(catalog: Catalog, query: Params) -> dict[str, Any]:
    """Known models side by side: observed scores, and the fit's completion elsewhere, with
    each model's P(best), expected rank and P(A > B) (`predictor.web.standings`). An
    ambiguous name is listed under `ambiguous` with the ids it could mean, a misspelt one
    under `unknown` with its close matches, the other models compared without them (a link
    with one typo still compares the rest); when every name is unknown, the first one's
    error."""
    params.check_allowed(query, ["version", "models", "benchmarks", "level"], "/api/compare")
    bench = _bench(catalog, query)
    level = params.level(query)
    model_ids: list[str] = []
    own: dict[str, PrivateModel] = {}  # private models asked for, by their `private:` id
    team: list[PrivateModel] | None = None  # read once, when a name needs it
    left_out: dict[str, list[dict[str, Any]]] = {"ambiguous": [], "unknown": []}
    first_error: ApiError | None = None
    for name in params.names(query, "models", required=True):
        if private.explicit(name) and team is None:
            team = catalog.private_models()
        try:
            found = _known_model(catalog, bench, name, private_models=team)
        except ApiError as exc:
            unresolved = _unresolved(bench, name)
            if unresolved is None:
                raise
            kind, ids = unresolved
            left_out[kind].append({"name": name, "variants": ids})
            if kind == "unknown":
                first_error = first_error or exc
            continue
        if isinstance(found, PrivateModel):
            own[private.model_id(found)] = found
            found = private.model_id(found)
        if found not in model_ids:
            model_ids.append(found)
    if not model_ids and not left_out["ambiguous"] and first_error is not None:
        raise first_error  # nothing to compare and nothing to choose from
    chosen = params.names(query, "benchmarks")
    benchmark_ids = (
        list(dict.fromkeys(_resolve(bench.resolve_benchmark, b) for b in chosen))
        if chosen
        else list(bench.fit_benchmarks_)
    )
    try:  # a ValueError is about the request (as in `predict`), not a server fault
        columns = [
            private.column(bench, own[m], level) if m in own else _column(bench, m, level)
            for m in model_ids
        ]
    except ValueError as exc:
        raise bad_request(str(exc)) from None
    observed = {
        (m, b): s
        for m, b, s in bench.snapshot.cells.select("model_id", "benchmark_id", "score").iter_rows()
        if m in model_ids
    }
    rows = []
    for b in benchmark_ids:
        values = []
        for model_id, cells in zip(model_ids, columns, strict=True):
            cell = cells.get(b)
            if cell is None and (model_id, b) in observed:  # observed but outside the fit
                score = observed[(model_id, b)]
                cell = {"score": score, "low": score, "high": score, "observed": True}
            values.append(cell)
        rows.append({"benchmark": b, "values": values})
    row_odds, across = standings.odds(bench, model_ids, rows, level)
    return {
        "version": bench.version,
        "level": level,
        "models": [
            private.model_row(own[m]) if m in own else _model_row(bench, m) for m in model_ids
        ],
        "benchmarks": [_benchmark_row(bench, b) for b in benchmark_ids],
        "rows": [{**row, **odds} for row, odds in zip(rows, row_odds, strict=True)],
        "overall": across,
        **left_out,
    }


def _fitted_cell(
    bench: BenchPress, model_id: str, benchmark_id: str, level: float
) -> dict[str, Any] | None:
    """The fit's value and interval for a cell of the fitted block; None outside it."""
    if model_id not in bench.fit_models_ or benchmark_id not in bench.fit_benchmarks_:
        return None
    i, j = bench.fit_models_.index(model_id), bench.fit_benchmarks_.index(benchmark_id)
    means, low, high = bench.fitted_values(keep_observed=False, level=level)
    mean = float(means[i, j])
    return {
        "score": figures.number(mean),
        "low": figures.number(min(float(low[i, j]), mean)),
        "high": figures.number(max(float(high[i, j]), mean)),
        "level": level,
    }


def cell(catalog: Catalog, query: Params) -> dict[str, Any]:
    """One cell: its observation with provenance (or null), the fit's value, and conflicts."""
    params.check_allowed(query, ["version", "model", "benchmark", "level"], "/api/cell")
    bench = _bench(catalog, query)
    level = params.level(query)
    # an unknown name is a 404, as for /api/models/<id>; the message says which parameter
    model_id = _resolve(bench.resolve_model, params.required_text(query, "model"), 404, "model")
    benchmark = params.required_text(query, "benchmark")
    benchmark_id = _resolve(bench.resolve_benchmark, benchmark, 404, "benchmark")
    scores = bench.scores()
    found = scores.filter(
        (scores["model_id"] == model_id) & (scores["benchmark_id"] == benchmark_id)
    )
    found = found.drop("model_id", "benchmark_id")
    observation = _record(found.row(0, named=True)) if found.height else None
    try:  # a ValueError is about the request (as in `predict`), not a server fault
        fitted = _fitted_cell(bench, model_id, benchmark_id, level)
    except ValueError as exc:
        raise bad_request(str(exc)) from None
    conflicts = bench.snapshot.conflicts
    others = conflicts.filter(
        (conflicts["model_id"] == model_id) & (conflicts["benchmark_id"] == benchmark_id)
    ).drop("model_id", "benchmark_id")
    return {
        "version": bench.version,
        "model": _model_row(bench, model_id),
        "benchmark": _benchmark_row(bench, benchmark_id),
        "observation": observation,
        "fitted": fitted,
        "conflicts": [_record(r) for r in others.iter_rows(named=True)],
    }


def plots(catalog: Catalog, query: Params) -> dict[str, Any]:
    """Data for the fit's plots: spectrum, benchmark map, predicted vs actual (if recorded)."""
    params.check_allowed(query, ["version"], "/api/plots")
    bench = _bench(catalog, query)
    return {
        "version": bench.version,
        "spectrum": figures.spectrum(bench.manifest),
        "loadings": figures.loadings(bench),
        "holdout": figures.holdout(bench.manifest, bench.snapshot.residuals, _percent(bench)),
    }


def _percent(bench: BenchPress) -> list[str]:
    table = bench.snapshot.benchmarks
    return table.filter(table["scale"] == "percent")["benchmark_id"].to_list()


def profiles(catalog: Catalog, query: Params) -> dict[str, Any]:
    """What the probe picker offers: use-case profiles (their benchmarks in this snapshot's
    fit, and the ones it lacks) and the cost of every fitted benchmark, with the unit."""
    params.check_allowed(query, ["version"], "/api/profiles")
    bench = _bench(catalog, query)
    fitted = set(bench.fit_benchmarks_)
    return {
        "version": bench.version,
        "profiles": [
            {
                "name": name,
                "benchmarks": profile(name, bench.fit_benchmarks_),
                "missing": [b for b in members if b not in fitted],
            }
            for name, members in PROFILES.items()
        ],
        "default_targets": picker.DEFAULT_PROFILE,
        "default_k": picker.DEFAULT_K,
        "max_k": params.MAX_K,
        "cost_unit": picker.COST_UNIT,
        "cost_note": picker.COST_NOTE,
        "costs": picker.costs(bench),
    }


def probes(catalog: Catalog, query: Params) -> dict[str, Any]:
    """`BenchPress.select_probes(k, budget, targets, allowlist)`: the fields of
    `ProbeSelection.as_dict()`, and its `to_frame()` rows as `steps`.

    `targets`: a profile name or benchmark names (none: every fitted benchmark, which is slow);
    `allowlist`: the benchmarks that may be picked (none: every fitted benchmark)."""
    params.check_allowed(query, ["version", "k", "budget", "targets", "allowlist"], "/api/probes")
    bench = _bench(catalog, query)
    wanted = picker.request(bench, query)
    picker.check_budget(bench, wanted)
    try:
        selection = picker.select(bench, wanted)
    except (UnknownNameError, ValueError, TypeError) as exc:
        raise bad_request(str(exc)) from None
    if not selection.columns:
        raise bad_request("no benchmark can be picked as a probe with these settings")
    summary = selection.as_dict()
    return {
        "version": bench.version,
        "k": wanted.k,
        "budget": wanted.budget,
        "profile": wanted.profile,
        "targets": picker.target_ids(bench, wanted),
        "allowlist": None if wanted.allowlist is None else list(wanted.allowlist),
        "cost_unit": picker.COST_UNIT,
        **{key: _json_list(value) for key, value in summary.items()},
        "steps": [_record(r) for r in selection.to_frame().iter_rows(named=True)],
    }


def _json_list(value: Any) -> Any:
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    return _json_value(value)


def harness_list(catalog: Catalog, query: Params) -> dict[str, Any]:
    """`GET /api/harnesses`: the tools that run probes (`predictor.harnesses`), as the page
    labels them and the probe rows' task column that names each one's task."""
    params.check_allowed(query, [], "/api/harnesses")
    return {
        "harnesses": [
            {"id": h.id, "name": h.name, "label": h.label, "task_column": h.task_column}
            for h in harnesses()
        ]
    }


def results_info(catalog: Catalog, query: Params) -> dict[str, Any]:
    """`GET /api/results`: the size limit and formats of an upload."""
    params.check_allowed(query, [], "/api/results")
    return uploads.describe()


def results(catalog: Catalog, query: Params, data: bytes) -> dict[str, Any]:
    """`POST /api/results?name=FILE`: the file's bytes (the body) read into probe scores for
    this snapshot (`predictor.web.uploads`). `model`: which model of a file holding several."""
    params.check_allowed(query, ["version", "name", "model"], "/api/results")
    name = uploads.file_name(params.required_text(query, "name"))
    model = params.text(query, "model") or None
    bench = _bench(catalog, query)
    return uploads.read_upload(bench, name, data, model)


def private_list(catalog: Catalog, query: Params) -> dict[str, Any]:
    """The team's private models (never part of a snapshot)."""
    params.check_allowed(query, [], "/api/private")
    return private.listing(catalog.private_models())


def runs(catalog: Catalog, query: Params) -> dict[str, Any]:
    """Checkpoint runs (`benchpress track`): names, checkpoint counts, step ranges."""
    params.check_allowed(query, [], "/api/runs")
    return private.run_listing(catalog.private_models())


def run(catalog: Catalog, query: Params, name: str) -> dict[str, Any]:
    """One run's trajectory: per checkpoint its probe scores and the `targets` (a profile or
    benchmark names; default the page's profile) predicted from them, at `level`."""
    params.check_allowed(query, ["version", "targets", "level"], "/api/runs/<run>")
    bench = _bench(catalog, query)
    level = params.level(query)
    every = private.runs(catalog.private_models())
    found = every.get(name)
    if found is None:
        known = ", ".join(sorted(every)[:10]) or "none"
        raise not_found(
            f"no run {quoted(name)}; runs: {known} (create one: {private.TRACK_COMMAND})"
        )
    wanted = query if params.names(query, "targets") else {"targets": picker.DEFAULT_PROFILE}
    chosen, listed = picker.parse_targets(bench, wanted)
    targets = (
        profile(chosen, bench.fit_benchmarks_)
        if chosen is not None
        else list(listed)
        if listed is not None
        else list(bench.fit_benchmarks_)
    )
    return private.trajectory(bench, name, found, chosen, targets, level)


MAX_NAME_CHARS = 200  # a new benchmark's name, echoed back in the answer


def _finite(value: Any) -> Any:
    """Rows and lists with every float finite (or None) and every time as text, at any depth."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return _json_value(value)


def new_benchmark(catalog: Catalog, query: Params) -> dict[str, Any]:
    """`BenchPress.predict_benchmark`: a new benchmark's scores for every model of the fit
    from some models' scores on it (`scores`: model=score,... or an object, at least 3), with
    the ranking, the public benchmarks it behaves most like and the models to run next;
    `scale` percent (default) or unbounded, `name` as the answer shows it."""
    params.check_allowed(
        query, ["version", "scores", "scale", "level", "name"], "/api/new-benchmark"
    )
    bench = _bench(catalog, query)
    if query.get("scores") in (None, "", {}):
        raise bad_request("scores is empty: give model=score pairs of at least 3 models")
    known = params.scores(query)
    scale = (params.text(query, "scale") or "percent").strip() or "percent"
    level = params.level(query)
    name = params.text(query, "name")
    if name is not None and len(name) > MAX_NAME_CHARS:
        raise bad_request(f"name is longer than {MAX_NAME_CHARS} characters")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FractionScoresWarning)
        try:
            result = bench.predict_benchmark(known, scale=scale, level=level, name=name)  # type: ignore[arg-type]
        except (UnknownNameError, ValueError, TypeError) as exc:
            raise bad_request(str(exc)) from None
    said = [str(w.message) for w in caught if issubclass(w.category, FractionScoresWarning)]
    return {**_finite(result.as_dict()), "warnings": list(dict.fromkeys(said))}


Endpoint = Callable[[Catalog, Params], dict[str, Any]]
ENDPOINTS: dict[str, Endpoint] = {
    "versions": versions,
    "snapshot": snapshot,
    "predict": predict,
    "side": side,
    "matrix": matrix,
    "compare": compare,
    "cell": cell,
    "plots": plots,
    "profiles": profiles,
    "probes": probes,
    "harnesses": harness_list,
    "results": results_info,
    "private": private_list,
    "runs": runs,
    "new-benchmark": new_benchmark,
}
POST_ENDPOINTS = frozenset({"predict", "compare", "results", "new-benchmark"})
UPLOAD_PATH = "/api/results"  # POST: a file's raw bytes, not parameters


NAMED = {"models/": model, "runs/": run}  # /api/models/<id>, /api/runs/<run>: GET only


def handle(
    catalog: Catalog, path: str, query: Params, method: str = "GET", data: bytes = b""
) -> dict[str, Any]:
    """Route `/api/<name>` (already URL-decoded) to its endpoint; ApiError on bad requests.
    `data`: the body of an upload (`POST /api/results`)."""
    if not path.startswith("/api/"):
        raise not_found(f"no such endpoint: {path}")
    name = path[len("/api/") :]
    for prefix, named in NAMED.items():
        if name.startswith(prefix) and len(name) > len(prefix):
            if method not in ("GET", "HEAD"):
                raise ApiError(405, f"{path} accepts GET only")
            return named(catalog, query, name[len(prefix) :])
    endpoint = ENDPOINTS.get(name)
    if endpoint is None:
        known = ", ".join(f"/api/{n}" for n in [*ENDPOINTS, *(f"{p}<id>" for p in NAMED)])
        raise not_found(f"no such endpoint: {path}; known: {known}")
    if method == "POST" and name not in POST_ENDPOINTS:
        raise ApiError(405, f"{path} accepts GET only")
    if method == "POST" and path == UPLOAD_PATH:
        return results(catalog, query, data)
    return endpoint(catalog, query)


def allowed_methods(path: str) -> str:
    name = path[len("/api/") :] if path.startswith("/api/") else ""
    return "GET, HEAD, POST" if name in POST_ENDPOINTS else "GET, HEAD"


__all__ = ["ENDPOINTS", "UPLOAD_PATH", "allowed_methods", "handle"]
