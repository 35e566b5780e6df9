"""A team's private models and checkpoint runs on the page, beside the snapshot, never in it.

They come from `predictor.private.private_models` (the store under BENCHPRESS_HOME) through
the catalog, on every request (a `benchpress models add` shows up without a restart). A private
model is named `private:NAME` wherever the page accepts a known model (a bare NAME works too
when no snapshot model has that name); its scores are folded in against the snapshot's fit as
probes, as `BenchPress.predict` does for any new model. Nothing here changes what `/api/matrix`
or `/api/snapshot` describe.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from predictor.api import BenchPress
from predictor.private import PrivateModel
from predictor.resolve import UnknownNameError
from predictor.web import figures
from predictor.web.errors import bad_request

PREFIX = "private:"
TRACK_COMMAND = "benchpress track RUN --from 'ckpts/step-*/results*.json'"
ADD_COMMAND = "benchpress models add NAME --from results.json"
MAX_CHECKPOINTS = 500  # a longer run is thinned evenly (first and last kept) for the page


def model_id(model: PrivateModel) -> str:
    return f"{PREFIX}{model.name}"


def lookup(models: Sequence[PrivateModel], name: str) -> PrivateModel | None:
    """The private model called `private:NAME` or `NAME` (the first one of that name)."""
    wanted = name[len(PREFIX) :] if name.startswith(PREFIX) else name
    return next((m for m in models if m.name == wanted), None)


def explicit(name: str) -> bool:
    """`private:NAME` asks for a private model only, never a snapshot model."""
    return name.startswith(PREFIX)


def model_row(model: PrivateModel) -> dict[str, Any]:
    """The fields a snapshot model row has (`model_id`, `name`, `n_cells`), marked private."""
    return {
        "model_id": model_id(model),
        "name": model.name,
        "private": True,
        "run": model.run,
        "step": model.step,
        "added_at": model.added_at,
        "n_cells": len(model.scores),
    }


def listing(models: Sequence[PrivateModel]) -> dict[str, Any]:
    """`GET /api/private`: every private model (for the pickers), and how to add one."""
    return {"models": [model_row(m) for m in models], "command": ADD_COMMAND}


def split_scores(
    bench: BenchPress, model: PrivateModel
) -> tuple[dict[str, float], dict[str, float], list[str]]:
    """(fitted probe scores, scores on any snapshot benchmark, names this snapshot lacks), each
    benchmark under its canonical id."""
    fitted: dict[str, float] = {}
    known: dict[str, float] = {}
    missing: list[str] = []
    for name, score in model.scores.items():
        try:
            benchmark = bench.resolve_benchmark(name)
        except UnknownNameError:
            missing.append(name)
            continue
        known.setdefault(benchmark, score)
        if benchmark in bench.fit_benchmarks_:
            fitted.setdefault(benchmark, score)
    return fitted, known, missing


def _predict(
    bench: BenchPress, probes: dict[str, float], level: float, targets: Any = None
) -> dict[str, dict[str, Any]]:
    try:
        predictions = bench.predict(probes, level=level, targets=targets)
    except (UnknownNameError, ValueError, TypeError) as exc:  # a stored score out of range
        raise bad_request(str(exc)) from None
    return {
        b: {
            "score": figures.number(p.score),
            "low": figures.number(p.low),
            "high": figures.number(p.high),
            "observed": p.observed,
        }
        for b, p in predictions.items()
    }


def column(bench: BenchPress, model: PrivateModel, level: float) -> dict[str, dict[str, Any]]:
    """A compare column: its fitted-benchmark scores folded in, its other scores as observed."""
    fitted, known, _ = split_scores(bench, model)
    cells = _predict(bench, fitted, level) if fitted else {}
    for benchmark, score in known.items():
        if benchmark not in cells:
            cells[benchmark] = {"score": score, "low": score, "high": score, "observed": True}
    return cells


def model_answer(bench: BenchPress, model: PrivateModel, probes: int) -> dict[str, Any]:
    """`/api/models/private:NAME`: the shape of a snapshot model's answer (scores, suggested
    probes: its most widely reported fitted benchmarks), with `private` provenance."""
    _, known, missing = split_scores(bench, model)
    fitted = set(bench.fit_benchmarks_)
    reported = dict(bench.snapshot.benchmarks.select("benchmark_id", "n_cells").iter_rows())
    usable = sorted((b for b in known if b in fitted), key=lambda b: (-reported[b], b))
    return {
        "version": bench.version,
        "model": model_row(model),
        "scores": [
            {
                "benchmark_id": b,
                "score": known[b],
                "probe": b in fitted,
                "source": "private",
                "url": None,
                "fetched_at": model.added_at,
                "payload_sha256": None,
            }
            for b in sorted(known)
        ],
        "not_in_snapshot": sorted(missing),
        "suggested_probes": usable[:probes],
    }


# ------------------------------------------------------------------------------------ runs
def runs(models: Sequence[PrivateModel]) -> dict[str, list[PrivateModel]]:
    """run -> its checkpoints in step order (the provider's order)."""
    found: dict[str, list[PrivateModel]] = {}
    for model in models:
        if model.run is not None:
            found.setdefault(model.run, []).append(model)
    return found


def run_listing(models: Sequence[PrivateModel]) -> dict[str, Any]:
    """`GET /api/runs`: each run with its number of checkpoints and step range."""
    listed = []
    for name, points in sorted(runs(models).items()):
        steps = [p.step for p in points if p.step is not None]
        listed.append(
            {
                "run": name,
                "checkpoints": len(points),
                "first_step": min(steps) if steps else None,
                "last_step": max(steps) if steps else None,
            }
        )
    return {"runs": listed, "command": TRACK_COMMAND}


def thin(points: list[PrivateModel], most: int = MAX_CHECKPOINTS) -> list[PrivateModel]:
    """At most `most` checkpoints, evenly spread, the first and the last always kept."""
    if len(points) <= most:
        return points
    last = len(points) - 1
    picked = sorted({round(i * last / (most - 1)) for i in range(most)})
    return [points[i] for i in picked]


def trajectory(
    bench: BenchPress,
    run: str,
    points: list[PrivateModel],
    profile: str | None,
    targets: list[str],
    level: float,
) -> dict[str, Any]:
    """`GET /api/runs/<run>`: per checkpoint (step order) its observed probe scores and the
    targets predicted from them (`BenchPress.predict`, intervals at `level`)."""
    shown = thin(points)
    probes: list[str] = []
    checkpoints = []
    for point in shown:
        fitted, _, missing = split_scores(bench, point)
        for benchmark in fitted:
            if benchmark not in probes:
                probes.append(benchmark)
        wanted = profile if profile is not None else targets
        checkpoints.append(
            {
                "name": point.name,
                "step": point.step,
                "added_at": point.added_at,
                "observed": fitted,
                "predicted": _predict(bench, fitted, level, wanted) if fitted else {},
                "not_in_snapshot": sorted(missing),
            }
        )
    return {
        "version": bench.version,
        "level": level,
        "run": run,
        "profile": profile,
        "targets": targets,
        "probes": probes,
        "total_checkpoints": len(points),
        "checkpoints": checkpoints,
    }
