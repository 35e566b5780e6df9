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
from predictor.names.resolve import UnknownNameError
from predictor.private import PROVENANCE_FIELDS, PrivateModel
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


def _resolved(bench: BenchPress, model: PrivateModel) -> tuple[dict[str, str], list[str]]:
    """(canonical id -> the stored benchmark id its score is kept under (the first one that
    resolves to it), stored names this snapshot lacks)."""
    found: dict[str, str] = {}
    missing: list[str] = []
    for name in model.scores:
        try:
            benchmark = bench.resolve_benchmark(name)
        except UnknownNameError:
            missing.append(name)
            continue
        found.setdefault(benchmark, name)
    return found, missing


def split_scores(
    bench: BenchPress, model: PrivateModel
) -> tuple[dict[str, float], dict[str, float], list[str]]:
    """(fitted probe scores, scores on any snapshot benchmark, names this snapshot lacks), each
    benchmark under its canonical id."""
    found, missing = _resolved(bench, model)
    known = {benchmark: model.scores[name] for benchmark, name in found.items()}
    fitted = {b: score for b, score in known.items() if b in bench.fit_benchmarks_}
    return fitted, known, missing


# ------------------------------------------------------------------------------ provenance


def file_name(path: object) -> str | None:
    """A stored file's name without its folders: the page never shows where on the machine
    that stored it the file was."""
    if path is None:
        return None
    name = str(path).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    return name or None


def _facts(stored: Any) -> dict[str, Any]:
    """One score's provenance as the page gets it: every field present (None when the file did
    not say), the file by its name only."""
    stored = stored or {}
    facts = {k: None if stored.get(k) is None else str(stored[k]) for k in PROVENANCE_FIELDS}
    facts["file"] = file_name(facts["file"])
    return facts


def provenance(bench: BenchPress, model: PrivateModel) -> dict[str, dict[str, Any]]:
    """canonical id -> where the model's score on it came from (the cell the score was read
    from: tool, its version, task, metric, when it was evaluated, file name and sha256)."""
    found, _ = _resolved(bench, model)
    return {b: _facts(model.provenance.get(name)) for b, name in found.items()}


SOURCE_KEY = ("file", "file_sha256", "format", "tool", "tool_version", "evaluated_at")


def sources(cited: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The files a model's scores came from, one entry per file (and tool run), with the tasks
    read from it and the benchmarks they gave, in file-name order."""
    grouped: dict[tuple[Any, ...], dict[str, Any]] = {}
    for benchmark in sorted(cited):
        facts = cited[benchmark]
        key = tuple(facts[k] for k in SOURCE_KEY)
        entry = grouped.setdefault(
            key, {**{k: facts[k] for k in SOURCE_KEY}, "tasks": [], "benchmarks": []}
        )
        if facts["task"] is not None and facts["task"] not in entry["tasks"]:
            entry["tasks"].append(facts["task"])
        entry["benchmarks"].append(benchmark)
    return sorted(grouped.values(), key=lambda e: tuple(str(e[k] or "") for k in SOURCE_KEY))


def _predict(
    bench: BenchPress,
    probes: dict[str, float],
    level: float,
    targets: Any = None,
    model: str | None = None,
) -> dict[str, dict[str, Any]]:
    """A private model's scores folded in; `model`, its name (or its run's), gives the fold-in
    its side information as the CLI does (`benchpress models show`, `track`): a fine-tune's
    name (`qwen3-32b-sft`) its base's family and release date."""
    try:
        predictions = bench.predict(probes, level=level, targets=targets, model=model)
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
    cells = _predict(bench, fitted, level, model=model.name.strip() or None) if fitted else {}
    for benchmark, score in known.items():
        if benchmark not in cells:
            cells[benchmark] = {"score": score, "low": score, "high": score, "observed": True}
    return cells


def model_answer(bench: BenchPress, model: PrivateModel, probes: int) -> dict[str, Any]:
    """`/api/models/private:NAME`: the shape of a snapshot model's answer (scores, suggested
    probes: its most widely reported fitted benchmarks), with `private` provenance: per score
    the tool that wrote it, its version, task and metric, file name and sha256, and when it
    was evaluated (`fetched_at`: when it was stored)."""
    _, known, missing = split_scores(bench, model)
    cited = provenance(bench, model)
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
                **cited[b],
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
    """`GET /api/runs/<run>`: per checkpoint (step order) its observed probe scores, the
    targets predicted from them (`BenchPress.predict`, intervals at `level`) and where its
    scores came from (`provenance` per benchmark, `sources` per file)."""
    shown = thin(points)
    probes: list[str] = []
    checkpoints = []
    for point in shown:
        fitted, _, missing = split_scores(bench, point)
        cited = provenance(bench, point)
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
                "predicted": _predict(bench, fitted, level, wanted, run.strip() or None)
                if fitted
                else {},
                "not_in_snapshot": sorted(missing),
                "provenance": cited,
                "sources": sources(cited),
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
