"""P(best) and expected rank of compared models, per benchmark and across several.

A tie group says which models are within noise of their neighbour, and P(A > B) covers one
pair; neither says how likely a model is to come out on top of five. Both figures here are
read from draws of every model's score on each benchmark, drawn from the normals P(A > B)
uses (each score +- its interval's spread for a prediction, +- its measurement noise for an
observed score), so that with two models P(best) is P(A > B):

- models predicted from probe scores (`compare_models`): each model's normal scores on its
  predicted benchmarks come from its joint predictive draws (`BenchPress.predictive_draws`,
  `JOINT_DRAWS` per model, seeded by its name, turned into standard normal scores by rank), so
  a model's benchmarks move together as the fit says they do (a model that beats the others
  on one coding benchmark by luck of its probes tends to on the next too); observed scores
  are drawn with their own noise;
- otherwise (known models' cells, a snapshot whose method has no predictive draws): `N_DRAWS`
  independent draws, seeded by the benchmark's name.

Per benchmark, P(best) is the share of draws a model is best in (a tie shares the draw);
expected rank is exact, 1 + the sum of P(other better) (so with two models P(best) and
1 - P(best) match the P(A > B) of the answer, within the draws' error). Across several
benchmarks (a target profile) the models are ordered, in each draw, by their mean rank over
the benchmarks (ranks, not scores: Elo and percentages do not average): P(best) is the share
of draws a model has the best mean rank, expected rank its mean place in that order.
Draws are seeded, so an answer repeats
exactly; the figures are within about 0.01 of the exact ones.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

N_DRAWS = 4000
JOINT_DRAWS = 4000  # per model: what a checkpoint's criteria are read from too
SEED = 0


def seed(name: str) -> int:
    """A seed of its own for a benchmark's or a model's draws: its figures do not change with
    the other benchmarks or models asked about."""
    return zlib.crc32(f"{SEED}:{name}".encode())


def normal_draws(benchmark: str, scores: Sequence[float], sds: Sequence[float]) -> np.ndarray:
    """(N_DRAWS, models) independent normal draws of each model's score on `benchmark`."""
    rng = np.random.default_rng(seed(benchmark))
    mean = np.asarray(scores, dtype=float)
    sd = np.asarray(sds, dtype=float)
    return mean + sd * rng.standard_normal((N_DRAWS, len(mean)))


def normal_scores(drawn: np.ndarray) -> np.ndarray:
    """`drawn` (n draws) as standard normal scores by rank: the same order, normal margins
    (draws tied at a scale's edge are ordered as they come)."""
    n = len(drawn)
    grid = np.array([NormalDist().inv_cdf((k + 0.5) / n) for k in range(n)])
    out = np.empty(n)
    out[np.argsort(drawn, kind="stable")] = grid
    return out


def independent(name: str, n: int) -> np.ndarray:
    """`n` standard normal draws of their own (seeded by `name`): an observed score's noise."""
    return np.random.default_rng(seed(name)).standard_normal(n)


def p_best(goodness: np.ndarray) -> np.ndarray:
    """Per model (column), the share of draws (rows) in which it is best; a tie for first
    shares the draw equally."""
    top = goodness == goodness.max(axis=1, keepdims=True)
    return (top / top.sum(axis=1, keepdims=True)).mean(axis=0)


def ranks(goodness: np.ndarray) -> np.ndarray:
    """Per draw (row), each model's rank, 1 = best; tied models share the mean of their
    places."""
    out = np.empty_like(goodness, dtype=float)
    for i in range(goodness.shape[1]):
        own = goodness[:, [i]]
        better = (goodness > own).sum(axis=1)
        equal = (goodness == own).sum(axis=1) - 1
        out[:, i] = 1.0 + better + 0.5 * equal
    return out


def expected_ranks(p_matrix: dict[tuple[str, str], float], names: Sequence[str]) -> list[float]:
    """Each model's expected rank on one benchmark, exactly: 1 + the sum over the others of
    P(other better), the pairwise figures of the answer (an exact tie counts half)."""
    return [1.0 + sum(p_matrix[(o, n)] for o in names if o != n) for n in names]


def across(per_benchmark: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(P(best), expected rank) per model across benchmarks, from each benchmark's draws
    (same models, same column order): models ordered in each draw by their mean rank."""
    mean_rank = np.mean([ranks(g) for g in per_benchmark], axis=0)
    return p_best(-mean_rank), ranks(-mean_rank).mean(axis=0)
