"""The reference models a new model is ranked against when none are named.

`benchpress compare --from results/` on files of one model has nothing to compare it with but
the snapshot's own models. Ranked against models with measured scores on the targets, the
answer rests on observations rather than on other predictions: the default references are the
`COUNT` fitted models observed on the most targets, the newest release first among equals
(then by id, so the choice is deterministic), and the answer says how they were chosen.
"""

from __future__ import annotations

from collections.abc import Sequence

from predictor.fitted_matrix import FittedMatrix
from predictor.trust.profiles import resolve_targets

COUNT = 5
RULE = "the snapshot models observed on the most targets, newest first among equals"


def default_references(
    bp: FittedMatrix,
    targets: str | Sequence[str] | None = "general_assistant",
    count: int = COUNT,
) -> list[str]:
    """Up to `count` fitted model ids of `bp` by the module's rule; `targets` as
    `compare_with_known_models` takes them (a profile, names, None: every benchmark)."""
    chosen = resolve_targets(targets, bp.fit_benchmarks_, bp.resolve_benchmark)
    columns = [bp.fit_columns[t] for t in (bp.fit_benchmarks_ if chosen is None else chosen)]
    observed = bp.completer_.observed_[:, columns].sum(axis=1).tolist()
    models = bp.snapshot.models
    dates = (
        dict(models.select("model_id", "release_date").iter_rows())
        if "release_date" in models.columns
        else {}
    )
    ranked = sorted(range(len(bp.fit_models_)), key=bp.fit_models_.__getitem__)
    # stable sorts: newest release first (undated last), then the most observed targets
    ranked.sort(key=lambda i: str(dates.get(bp.fit_models_[i]) or ""), reverse=True)
    ranked.sort(key=lambda i: -observed[i])
    return [bp.fit_models_[i] for i in ranked[:count] if observed[i] > 0]
