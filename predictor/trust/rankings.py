"""Rankings from predictions: who is better on each benchmark, and how sure is that.

Each prediction's interval is read as a normal: sd = half-width / z(level), z the standard
normal quantile of (1 + level) / 2. For two models A and B on one benchmark,
P(A better than B) = Phi(s (mean_A - mean_B) / sqrt(sd_A^2 + sd_B^2)), s = +1 where higher is
better and -1 where lower is. An observed score is a measurement: its sd is its measurement
noise (`FittedMatrix.measurement_noise`: the standard error it was given with, else the
benchmark's default, `predictor.results.noise`), so two observed scores 1.8 points apart are
not a certain order. Each answer states the noise it assumed (`noise` columns, the summary's
last lines). Two adjacent models in the predicted order are tied ("within noise") when
|diff| < `TIE_POINTS` or P lies in `TIE_P`; ties chain, so a tie group is a run of adjacent
models linked by such pairs. P(best) and expected rank, per benchmark and across several, come
from the same normals (`predictor.trust.standings`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl

from predictor.fitted_matrix import FittedMatrix
from predictor.names.resolve import AmbiguousNameError, UnknownNameError
from predictor.private import PrivateModel, private_models
from predictor.reference_names import ReferenceModel, reference_notes, resolve_reference
from predictor.trust.missing_probes import MissingProbesWarning, split_targets
from predictor.trust.private_references import explicit, find_private, with_private_suggestions
from predictor.trust.profiles import resolve_targets
from predictor.trust.standings import (
    JOINT_DRAWS,
    across,
    expected_ranks,
    independent,
    normal_draws,
    normal_scores,
    p_best,
    seed,
)
from predictor.values import FractionScoresWarning, Noise, Prediction, SideUsed

TIE_POINTS = 2.0
TIE_P = (0.35, 0.65)
_NORMAL = NormalDist()


def sd_of(p: Prediction) -> float:
    """Normal-approximation sd of a prediction: half-width / z((1 + level) / 2)."""
    if p.observed or p.high <= p.low:
        return 0.0
    return p.confidence / _NORMAL.inv_cdf(0.5 + p.level / 2.0)


def p_better(
    mean_a: float, sd_a: float, mean_b: float, sd_b: float, higher_is_better: bool = True
) -> float:
    """P(A scores better than B) under independent normals."""
    diff = (mean_a - mean_b) if higher_is_better else (mean_b - mean_a)
    sd = math.hypot(sd_a, sd_b)
    if sd == 0.0:
        return 1.0 if diff > 0 else (0.0 if diff < 0 else 0.5)
    return _NORMAL.cdf(diff / sd)


def is_tie(diff: float, p: float) -> bool:
    return abs(diff) < TIE_POINTS or TIE_P[0] <= p <= TIE_P[1]


@dataclass(frozen=True)
class Entry:
    name: str
    score: float
    sd: float
    low: float
    high: float
    observed: bool = False
    noise: Noise | None = None  # an observed score's measurement noise (its sd is noise.sd)


@dataclass(frozen=True)
class BenchmarkRanking:
    benchmark: str
    higher_is_better: bool
    order: list[Entry]  # best first
    tie_groups: list[int]  # per entry in `order`: its tie group number (1 = best group)
    p_matrix: dict[tuple[str, str], float] = field(repr=False)  # (a, b) -> P(a better than b)


def rank_entries(
    benchmark: str, entries: Sequence[Entry], higher_is_better: bool = True
) -> BenchmarkRanking:
    sign = 1.0 if higher_is_better else -1.0
    order = sorted(entries, key=lambda e: (-sign * e.score, e.name))
    pm = {
        (a.name, b.name): p_better(a.score, a.sd, b.score, b.sd, higher_is_better)
        for a in order
        for b in order
        if a.name != b.name
    }
    return BenchmarkRanking(benchmark, higher_is_better, order, tie_groups(order, pm), pm)


def tie_groups(order: Sequence[Entry], pm: dict[tuple[str, str], float]) -> list[int]:
    """Per entry of `order` (best first) its tie group (1 = best): a new group starts where an
    entry is not within noise of the one above it (`is_tie` on the gap and P(above > it))."""
    groups, group = [], 1
    for k, entry in enumerate(order):
        if k > 0:
            prev = order[k - 1]
            if not is_tie(prev.score - entry.score, pm[(prev.name, entry.name)]):
                group += 1
        groups.append(group)
    return groups


@dataclass(frozen=True)
class Comparison:
    """Per-benchmark predicted order of several models (see `compare_models`), with each
    model's P(best) and expected rank per benchmark (`to_frame`) and across them (`overall`,
    `predictor.trust.standings`)."""

    rankings: list[BenchmarkRanking]
    level: float
    sides: dict[str, SideUsed] = field(default_factory=dict)  # each model's side information

    # per ranking, draws of each model's score (columns in its `order`): the models' joint
    # predictive draws (`compare_models`); None: the normals of P(A > B)
    joint: tuple[np.ndarray, ...] | None = field(default=None, repr=False)

    @cached_property
    def _draws(self) -> list[np.ndarray]:
        """Per ranking, draws of each model's goodness (score, negated where lower is
        better), columns in `order` (`predictor.trust.standings`)."""
        scores = self.joint or [
            normal_draws(r.benchmark, [e.score for e in r.order], [e.sd for e in r.order])
            for r in self.rankings
        ]
        return [d if r.higher_is_better else -d for r, d in zip(self.rankings, scores, strict=True)]

    @cached_property
    def _standings(self) -> list[dict[str, tuple[float, float]]]:
        """Per ranking: model -> (P(best), expected rank) on that benchmark."""
        out = []
        for r, d in zip(self.rankings, self._draws, strict=True):
            names = [e.name for e in r.order]
            best = p_best(d).tolist()
            rank = expected_ranks(r.p_matrix, names)
            out.append(dict(zip(names, zip(best, rank, strict=True), strict=True)))
        return out

    def overall(self) -> pl.DataFrame:
        """P(best) and expected rank across the benchmarks compared (a target profile), best
        first: in each draw the models are ordered by their mean rank over the benchmarks
        (`predictor.trust.standings`). Only benchmarks that rank every model count;
        `benchmarks` says how many did."""
        models = sorted({e.name for r in self.rankings for e in r.order})
        full = [k for k, r in enumerate(self.rankings) if sorted(e.name for e in r.order) == models]
        schema = {
            "rank": pl.Int64,
            "model": pl.String,
            "p_best": pl.Float64,
            "expected_rank": pl.Float64,
            "benchmarks": pl.Int64,
        }
        if not full:
            return pl.DataFrame(schema=schema)
        aligned = []
        for k in full:
            at = {e.name: j for j, e in enumerate(self.rankings[k].order)}
            aligned.append(self._draws[k][:, [at[m] for m in models]])
        best, rank = across(aligned)
        rows = sorted(
            zip(models, best.tolist(), rank.tolist(), strict=True), key=lambda x: (x[2], x[0])
        )
        return pl.DataFrame(
            [
                {
                    "rank": k + 1,
                    "model": m,
                    "p_best": b,
                    "expected_rank": r,
                    "benchmarks": len(full),
                }
                for k, (m, b, r) in enumerate(rows)
            ],
            schema=schema,
        )

    def to_frame(self) -> pl.DataFrame:
        rows = []
        for r, standing in zip(self.rankings, self._standings, strict=True):
            for k, (e, g) in enumerate(zip(r.order, r.tie_groups, strict=True)):
                below = r.order[k + 1].name if k + 1 < len(r.order) else None
                rows.append(
                    {
                        "benchmark": r.benchmark,
                        "rank": k + 1,
                        "model": e.name,
                        "score": e.score,
                        "low": e.low,
                        "high": e.high,
                        "observed": e.observed,
                        "tie_group": g,
                        "p_best": standing[e.name][0],
                        "expected_rank": standing[e.name][1],
                        "p_better_than_next": None
                        if below is None
                        else r.p_matrix[(e.name, below)],
                        **_noise_columns("", e),
                    }
                )
        return _typed_noise(pl.DataFrame(rows))

    def pairwise(self) -> pl.DataFrame:
        rows = [
            {"benchmark": r.benchmark, "a": a, "b": b, "p_a_better": p}
            for r in self.rankings
            for (a, b), p in r.p_matrix.items()
        ]
        return pl.DataFrame(
            rows,
            schema={
                "benchmark": pl.String,
                "a": pl.String,
                "b": pl.String,
                "p_a_better": pl.Float64,
            },
        )

    def summary(self) -> str:
        lines = []
        for r in self.rankings:
            parts = []
            for k, (e, g) in enumerate(zip(r.order, r.tie_groups, strict=True)):
                sep = "" if k == 0 else (" ~ " if g == r.tie_groups[k - 1] else " > ")
                parts.append(f"{sep}{e.name} ({e.score:.1f})")
            lines.append(f"{r.benchmark}: " + "".join(parts))
        lines.append("'>' = predicted better, '~' = within noise (diff < 2 or P in 0.35-0.65)")
        lines += self._overall_lines()
        lines += noise_lines(self.rankings, "")
        return "\n".join(lines)

    def _overall_lines(self) -> list[str]:
        """The summary's lines on the models across the benchmarks (several benchmarks
        only): P(best) and expected rank of each, best first."""
        if len(self.rankings) < 2:
            return []
        frame = self.overall()
        if frame.is_empty():
            return []
        lines = [
            f"across the {frame['benchmarks'][0]} benchmarks (each draw ordered by mean rank): "
            "P(best), expected rank"
        ]
        lines += [
            f"  {r['model']}: P(best) {r['p_best']:.2f}, expected rank {r['expected_rank']:.1f}"
            for r in frame.iter_rows(named=True)
        ]
        return lines

    def measurement_noise(self) -> list[dict[str, object]]:
        """The noise each observed score was compared with (JSON-ready rows)."""
        return noise_rows(self.rankings)

    def __str__(self) -> str:  # `print(comparison)` shows the answer, not the fields
        return self.summary()

    __repr__ = __str__  # a notebook or REPL echo shows it too


def _direction(bp, benchmark: str) -> bool:
    table = bp.snapshot.benchmarks
    if "direction" not in table.columns:
        return True
    found = table.filter(pl.col("benchmark_id") == benchmark)["direction"].to_list()
    return not (found and found[0] == "lower")


def _entry(name: str, p: Prediction, noise: Noise | None = None) -> Entry:
    """A model's place on a benchmark: a prediction with the spread of its interval, an
    observed score with its measurement noise (`noise`; none given: taken as exact)."""
    if p.observed and noise is not None:
        return Entry(name, p.score, noise.sd, p.low, p.high, True, noise)
    return Entry(name, p.score, sd_of(p), p.low, p.high, p.observed)


def _measured_entry(bp: FittedMatrix, name: str, p: Prediction, stderr: Mapping) -> Entry:
    """`_entry` with an observed score's noise: its standard error in `stderr` (benchmark ->
    SE, `Predictions.stderr`), else the benchmark's default (`measurement_noise`)."""
    if not p.observed:
        return _entry(name, p)
    return _entry(name, p, bp.measurement_noise(p.benchmark, p.score, stderr.get(p.benchmark)))


def rank_cells(
    bp: FittedMatrix, benchmark: str, cells: Mapping[str, Mapping[str, Any]], level: float
) -> BenchmarkRanking:
    """Models' cells on one benchmark ranked as `compare_models` ranks predictions: `cells`
    maps a model to its `score`, `low`, `high` (the interval at `level`) and `observed`; an
    observed score is a measurement, +- the benchmark's default noise (the web page's
    Compare tab)."""
    entries = [
        _measured_entry(
            bp,
            name,
            Prediction(
                benchmark,
                float(c["score"]),
                float(min(c["low"], c["score"])),
                float(max(c["high"], c["score"])),
                level,
                bool(c["observed"]),
            ),
            {},
        )
        for name, c in cells.items()
    ]
    return rank_entries(benchmark, entries, _direction(bp, benchmark))


def _noise_columns(prefix: str, e: Entry) -> dict[str, object]:
    """`noise` (the sd an observed score was compared with; None for a prediction) and
    `noise_source`, each under `prefix`."""
    return {
        f"{prefix}noise": None if e.noise is None else e.noise.sd,
        f"{prefix}noise_source": None if e.noise is None else e.noise.source,
    }


def _typed_noise(frame: pl.DataFrame) -> pl.DataFrame:
    """The noise columns as Float64 / String even where every entry is None (all scores
    predicted), so the frame's CSV reads back with its types."""
    return frame.with_columns(
        *(pl.col(c).cast(pl.Float64) for c in frame.columns if c.endswith("noise")),
        *(pl.col(c).cast(pl.String) for c in frame.columns if c.endswith("noise_source")),
    )


def noise_rows(rankings: Sequence[BenchmarkRanking]) -> list[dict[str, object]]:
    """One row per observed score: benchmark, model, score and the noise it was compared
    with (sd, source)."""
    return [
        {"benchmark": r.benchmark, "model": e.name, "score": e.score, **e.noise.as_dict()}
        for r in rankings
        for e in r.order
        if e.noise is not None
    ]


def noise_lines(rankings: Sequence[BenchmarkRanking], indent: str) -> list[str]:
    """The summary's statement of the noise assumed: one line per benchmark with observed
    scores, `model +- sd (source)` for each."""
    lines = []
    for r in rankings:
        shown = [
            f"{e.name} \u00b1{e.noise.sd:.1f} ({e.noise.source})"
            for e in r.order
            if e.noise is not None
        ]
        if shown:
            lines.append(f"{indent}  {r.benchmark}: {'; '.join(shown)}")
    if lines:
        lines.insert(
            0,
            f"{indent}observed scores are compared as measurements, +- their noise (sd): the "
            "standard error given, else the benchmark's default",
        )
    return lines


def compare_models(
    bp,
    probes: Sequence[Mapping[str, float]],
    target_benchmarks,
    names: Sequence[str] | None = None,
    level: float = 0.9,
    *,
    models: Sequence[str | None] | None = None,
) -> Comparison:
    """Predict every model from its probe dict and rank them on each target benchmark.
    A probe is an observed score: compared as measured, +- its standard error (a
    `(score, standard_error)` probe) or else its benchmark's default noise.

    `models`: each model's name for its side information (`BenchPress.predict(...,
    model=...)`: the family read from it; None = no name); default `names`, when given.
    `.sides` says which family and release date each was folded in with."""
    if len(probes) < 2:
        raise ValueError("give at least two models' probe scores to compare")
    if models is None:
        models = list(names) if names is not None else [None] * len(probes)
    names = [f"model_{k + 1}" for k in range(len(probes))] if names is None else list(names)
    if len(models) != len(probes):
        raise ValueError("models must give one name (or None) per probe dict")
    if len(names) != len(probes) or len(set(names)) != len(names):
        raise ValueError("names must be unique, one per probe dict")
    target_benchmarks = split_targets(bp, target_benchmarks)  # lacking here: warned, left out
    targets = resolve_targets(target_benchmarks, bp.fit_benchmarks_, bp.resolve_benchmark)
    if targets is None:
        raise ValueError("target_benchmarks is required")
    preds = [bp.predict(p, level=level, model=m) for p, m in zip(probes, models, strict=True)]
    rankings = [
        rank_entries(
            t,
            [
                _measured_entry(bp, n, pr[t], getattr(pr, "stderr", {}))
                for n, pr in zip(names, preds, strict=True)
            ],
            _direction(bp, t),
        )
        for t in targets
    ]
    sides = {n: p.side for n, p in zip(names, preds, strict=True)}
    joint = _joint_draws(bp, rankings, probes, names, models, level)
    return Comparison(rankings, level, sides, joint)


def _joint_draws(
    bp,
    rankings: Sequence[BenchmarkRanking],
    probes: Sequence[Mapping],
    names: Sequence[str],
    models: Sequence[str | None],
    level: float,
) -> tuple[np.ndarray, ...] | None:
    """Per ranking, draws of each model's score on its benchmark (columns in the ranking's
    order): the normal of P(A > B), its standard normal scores taken from the model's joint
    predictive draws, so a model's benchmarks move together as the fit says
    (`predictor.trust.standings`); an observed score's noise is drawn on its own. None when
    the snapshot's method has no predictive draws (the recipe ALS): independent draws serve
    instead."""
    per_model = {}
    for name, probe, model in zip(names, probes, models, strict=True):
        try:
            with warnings.catch_warnings():  # `predict` of the same probes already said it
                warnings.simplefilter("ignore", MissingProbesWarning)
                warnings.simplefilter("ignore", FractionScoresWarning)
                benchmarks, drawn = bp.predictive_draws(
                    probe, n=JOINT_DRAWS, random_state=seed(name), level=level, model=model
                )
        except TypeError:  # a method without a predictive distribution
            return None
        per_model[name] = ({b: j for j, b in enumerate(benchmarks)}, drawn)
    out = []
    for r in rankings:
        columns = []
        for e in r.order:
            index, drawn = per_model[e.name]
            z = (
                independent(f"{e.name}/{r.benchmark}", JOINT_DRAWS)
                if e.observed
                else normal_scores(drawn[:, index[r.benchmark]])
            )
            columns.append(e.score + e.sd * z)
        out.append(np.column_stack(columns))
    return tuple(out)


@dataclass(frozen=True)
class KnownComparison:
    """Where a new model would rank among reference models (see `compare_with_known_models`)."""

    name: str
    rankings: list[BenchmarkRanking]
    level: float
    notes: tuple[str, ...] = ()  # which id a reference name stood for (reference_names)
    side: SideUsed | None = None  # the new model's side information (None: predictions given)
    # references that are the team's private models (`benchpress models add`), not public ones
    private: frozenset[str] = frozenset()
    snapshot: str | None = None  # the version the new model is predicted in
    # references this snapshot lacks -> the other snapshot their scores come from
    elsewhere: dict[str, str] = field(default_factory=dict)

    def to_frame(self) -> pl.DataFrame:
        rows = []
        for r in self.rankings:
            new = next(e for e in r.order if e.name == self.name)
            for e in r.order:
                if e.name == self.name:
                    continue
                rows.append(
                    {
                        "benchmark": r.benchmark,
                        "reference_model": e.name,
                        "reference_score": e.score,
                        "reference_observed": e.observed,
                        "reference_private": e.name in self.private,
                        "reference_snapshot": self.elsewhere.get(e.name, self.snapshot),
                        "new_score": new.score,
                        "new_low": new.low,
                        "new_high": new.high,
                        "p_new_better": r.p_matrix[(self.name, e.name)],
                        "new_rank": [x.name for x in r.order].index(self.name) + 1,
                        "expected_rank": self._expected_rank(r),
                        **_noise_columns("reference_", e),
                        **_noise_columns("new_", new),
                    }
                )
        return _typed_noise(pl.DataFrame(rows))

    def measurement_noise(self) -> list[dict[str, object]]:
        """The noise each observed score was compared with (JSON-ready rows)."""
        return noise_rows(self.rankings)

    def _expected_rank(self, r: BenchmarkRanking) -> float:
        return 1.0 + sum(r.p_matrix[(e.name, self.name)] for e in r.order if e.name != self.name)

    def summary(self) -> str:
        count = len(self.rankings[0].order) - 1
        lines = [
            f"{self.name} among {count} reference model{'' if count == 1 else 's'} "
            f"({int(round(self.level * 100))}% intervals):"
        ]
        lines += [f"  reference {note}" for note in self.notes]
        lines += self._mixed_snapshots()
        if self.private:
            lines.append(
                "  (private) = the team's own model (benchpress models add), not a public one"
            )
        for r in self.rankings:
            names = [e.name for e in r.order]
            k = names.index(self.name)
            new = r.order[k]
            # a probe is the model's own measurement: no interval to show
            shown = (
                f"observed {new.score:.1f}"
                if new.observed
                else f"predicted {new.score:.1f} [{new.low:.1f}, {new.high:.1f}]"
            )
            lines.append(
                f"  {r.benchmark}: {shown}, "
                f"rank {k + 1} of {len(names)} (expected {self._expected_rank(r):.1f})"
            )
            for e in r.order:
                if e.name == self.name:
                    continue
                kind = "observed" if e.observed else "predicted"
                p = r.p_matrix[(self.name, e.name)]
                mark = "  (private)" if e.name in self.private else ""
                if e.name in self.elsewhere:
                    mark += f"  (snapshot {self.elsewhere[e.name]})"
                lines.append(
                    f"      vs {e.name} ({e.score:.1f}, {kind}): P(better) = {p:.2f}{mark}"
                )
        lines += noise_lines(self.rankings, "  ")
        return "\n".join(lines)

    def _mixed_snapshots(self) -> list[str]:
        """The lines saying which references come from another snapshot than the new model's
        prediction: another matrix and fit, so their scores and intervals are not on the
        same footing as the prediction's."""
        by_version: dict[str, list[str]] = {}
        for model, version in self.elsewhere.items():
            by_version.setdefault(version, []).append(model)
        here = f"snapshot {self.snapshot}" if self.snapshot else "this snapshot"
        return [
            f"  mixed snapshots: {self.name} is predicted in {here}, but {', '.join(models)} "
            f"{'is' if len(models) == 1 else 'are'} not in it: "
            f"{'its' if len(models) == 1 else 'their'} scores come from snapshot {version} "
            "(another matrix and fit); compare with care"
            for version, models in by_version.items()
        ]

    def __str__(self) -> str:  # `print(comparison)` shows the answer, not the fields
        return self.summary()

    __repr__ = __str__  # a notebook or REPL echo shows it too


def _new_model_predictions(
    bp, predictions_or_probes: Mapping, level: float | None, side: Mapping[str, Any]
) -> tuple[Mapping[str, Prediction], float]:
    """The new model's predictions and their level: `predict` output as given, else its probe
    scores predicted at `level` (default 0.9).

    Predictions carry their interval at one level; another level needs the probes (the
    interval is not symmetric, so it cannot be rescaled), hence an explicit mismatch raises."""
    values = list(predictions_or_probes.values())
    if not values or not all(isinstance(v, Prediction) for v in values):
        level = 0.9 if level is None else level
        return bp.predict(predictions_or_probes, level=level, **side), level
    levels = sorted({v.level for v in values})
    if len(levels) > 1:
        shown = ", ".join(f"{x:g}" for x in levels)
        raise ValueError(f"the predictions mix interval levels ({shown}): predict at one level")
    own = levels[0]
    if level is not None and not math.isclose(level, own, rel_tol=0.0, abs_tol=1e-12):
        raise ValueError(
            f"level={level:g} differs from the level of the given predictions ({own:g}): "
            f"omit level, or pass the probe scores to compare at {level:g}"
        )
    return predictions_or_probes, own


def _reference_ids(
    bp, reference_models: Sequence[str] | str, name: str, private: dict | None = None
) -> list[str]:
    """Fitted snapshot ids (or private model names) of the reference models, in the order
    given, each once (a name and its alias are one model; ranking a model against itself
    means nothing).

    A name the snapshot does not know may be a private model of BENCHPRESS_HOME
    (`benchpress models add`), matched exactly; `private` (name -> PrivateModel) collects
    those found. A snapshot model wins over a private one of the same name (`models add`
    refuses such names, but a later snapshot may bring one)."""
    if isinstance(reference_models, str):  # one name, not its letters
        reference_models = [reference_models]
    found = private if private is not None else {}
    refs = list(dict.fromkeys(_reference_id(bp, m, found) for m in reference_models))
    if not refs:
        raise ValueError("give at least one reference model")
    if name in refs:
        raise ValueError(f"name {name!r} clashes with a reference model")
    missing = [m for m in refs if m not in bp.fit_models_ and m not in found]
    if missing:
        raise ValueError(f"reference models not in the snapshot's fit: {missing}")
    return refs


def _reference_id(bp, name: str, private: dict) -> str:
    """One reference name: `private:NAME`, a private model only
    (`predictor.trust.private_references`); else a snapshot model's id (by
    `predictor.reference_names`: spellings, headline settings), else a private model's name,
    else a model of the catalogue snapshot (collected in `private`, ranked with its scores
    there). Unknown everywhere: the snapshot's `UnknownNameError`, close private names
    suggested too."""
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"reference model name must be a non-empty string, got {name!r}")
    if explicit(name):
        match = find_private(private_models(), name)
        private[match.name] = match
        return match.name
    try:
        return resolve_reference(bp, name, catalogue=None).model_id
    except AmbiguousNameError:
        raise
    except UnknownNameError:
        models = private_models()
        match = next((m for m in models if m.name == name), None)
        if match is None:
            try:
                ref = resolve_reference(bp, name)  # else this snapshot's UnknownNameError
            except AmbiguousNameError:
                raise
            except UnknownNameError as unknown:
                raise with_private_suggestions(unknown, models) from None
            private[ref.model_id] = ref
            return ref.model_id
        private[name] = match
        return name


def _private_predictions(
    bp: FittedMatrix, model, targets: Sequence[str], level: float
) -> dict[str, Prediction]:
    """A private model on each target: its stored score (observed, with its stored standard
    error as its noise where known) where it has one, else the fold-in of its stored scores
    on the snapshot's fitted benchmarks, as for any new model (`BenchPress.predict`, each
    score with its standard error), with its interval."""
    if hasattr(model, "predictions"):  # a catalogue model: its cells in its own snapshot
        return model.predictions(targets, level)
    errors = getattr(model, "stderr", {})
    fitted = {
        b: (v, errors[b]) if b in errors else v
        for b, v in model.scores.items()
        if b in bp.fit_columns
    }
    if not fitted:
        raise ValueError(
            f"private model {model.name!r} has no score on a benchmark fitted in snapshot "
            f"{bp.version}: it cannot be ranked there"
        )
    return bp.predict(fitted, level=level, targets=list(targets), model=model.name)


def compare_with_known_models(
    bp: FittedMatrix,
    predictions_or_probes: Mapping,
    reference_models: Sequence[str] | str,
    targets="general_assistant",
    level: float | None = None,
    name: str = "new model",
    *,
    model: str | None = None,
    family: str | None = None,
    release_date: str | None = None,
    base: str | None = None,
) -> KnownComparison:
    """Rank a new model (its probe scores, or `BenchPress.predict` output) among reference
    models of the snapshot. A reference model's score on a benchmark is its observed cell
    (a measurement: sd its benchmark's default noise, `predictor.results.noise`) or else the
    snapshot's completed cell with its interval; the new model's probes are measurements
    too (sd their standard error where given, else the default). Every answer states the
    noise it assumed (`.to_frame()`'s `*_noise` columns, `.measurement_noise()`, the
    summary's last lines). A reference may also be a private model (`benchpress models
    add`, by its exact name): its stored scores are its observed cells (measurements too),
    the rest is folded in from them with intervals; such references are marked private
    (`.private`, the frame's `reference_private`, "(private)" in the summary), so a private
    model never passes for a public one. Targets default
    to the `general_assistant` profile (a profile name, a list, or None = every fitted
    benchmark). With probe scores, `model`, `family`, `release_date` and `base` are the new
    model's side information, as in `BenchPress.predict`.

    `level` defaults to the predictions' own level (0.9 for probe scores); with predictions,
    a different `level` raises (their intervals exist at one level only). Predictions must
    cover every target: a partial dict raises naming the missing ones (pass `targets=` to
    compare on fewer). Reference names are resolved (`predictor.reference_names`: `gpt-5-5`,
    a model without its setting at its headline setting, a model this snapshot lacks from
    the catalogue snapshot; the summary says which id each stood for); repeats, e.g. an id
    and its alias, count once, in first-seen order."""
    side = {"model": model, "family": family, "release_date": release_date, "base": base}
    preds, level = _new_model_predictions(bp, predictions_or_probes, level, side)
    chosen = resolve_targets(targets, bp.fit_benchmarks_, bp.resolve_benchmark)
    chosen = list(bp.fit_benchmarks_) if chosen is None else chosen
    lacking = [t for t in chosen if t not in preds]
    if lacking:
        raise ValueError(
            f"the predictions lack {len(lacking)} target(s): {', '.join(lacking)}; pass "
            "bp.predict(...) output for every benchmark, or targets= among those predicted"
        )
    private: dict = {}
    refs = _reference_ids(bp, reference_models, name, private)
    row = {m: i for i, m in enumerate(bp.fit_models_)}
    mean, low, high = bp.fitted_values(keep_observed=True, level=level)
    observed = bp.completer_.observed_
    private_preds = {m: _private_predictions(bp, private[m], chosen, level) for m in private}
    stderr = getattr(preds, "stderr", {})  # the new model's probes' standard errors
    rankings = []
    for t in chosen:
        j = bp.fit_columns[t]
        entries = [_measured_entry(bp, name, preds[t], stderr)]
        for m in refs:
            if m in private_preds:
                own = private_preds[m]
                entries.append(_measured_entry(bp, m, own[t], getattr(own, "stderr", {})))
                continue
            i = row[m]
            p = Prediction(
                t,
                float(mean[i, j]),
                float(min(low[i, j], mean[i, j])),
                float(max(high[i, j], mean[i, j])),
                level,
                bool(observed[i, j]),
            )
            entries.append(_measured_entry(bp, m, p, {}))
        rankings.append(rank_entries(t, entries, _direction(bp, t)))
    notes = reference_notes(bp, reference_models, private)
    own = frozenset(m for m, found in private.items() if isinstance(found, PrivateModel))
    elsewhere = {
        m: found.snapshot.version
        for m, found in private.items()
        if isinstance(found, ReferenceModel) and not found.home
    }
    side = getattr(preds, "side", None)
    return KnownComparison(name, rankings, level, notes, side, own, bp.version, elsewhere)
