"""Percent scores that look like fractions (0.8 for 80%), for `FractionScoresWarning`.

A percent score in (0, 1] is almost surely a fraction: given as is, the answer would be for a
near-zero model on that benchmark, silently. So:

- probe scores (`predict`, `next`, `compare`, `track`, the web page's /api/predict): when every
  percent score given lies in 0-1 (some above 0) and one of them is below any score the fit
  saw on its benchmark, they are fractions: multiplied by 100 with one warning saying so
  (`converted_message`), as a tidy results file of fractions is
  (`predictor.results.tidy_fractions`). Scores that low which some model does have (a weak
  model on hard benchmarks: hle=0.4) are kept, with a warning (`kept_message`). A score in
  (0, 1] beside percent scores above 1 is left as given, with a warning naming it
  (`beside_percent_messages`): there one of them is a typo, and which one is not ours to
  guess.
- thresholds (`track --require mmlu_pro>=0.5`): a threshold strictly between 0 and 1 on a
  percent benchmark is refused, naming the criterion and the percent value
  (`fractional_threshold_messages`); 0 and 1 are kept (`>=1` is a plausible 1%).
- `BenchPress.fit`: a percent column (or the whole frame) lying in 0-1 warns
  (`fit_fraction_messages`); the frame is the caller's, so it is fitted as given.

Only percent scores are passed in here: Elo, ratings, dollars and other open scales are never
looked at.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

Scores = Sequence[tuple[str, float]]
SHOWN = 3  # scores named in a message


def split_fractions(scores: Scores) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """(scores in (0, 1]: fraction-like, scores above 1: plainly percent); zeros are neither."""
    small = [(name, v) for name, v in scores if 0.0 < v <= 1.0]
    percent = [(name, v) for name, v in scores if v > 1.0]
    return small, percent


def all_fractions(scores: Scores) -> bool:
    """Every score within 0-1 and one above 0: fractions, not percentages (all zeros are
    percentages as much as fractions: nothing to convert)."""
    small, percent = split_fractions(scores)
    return bool(small) and not percent and all(v >= 0.0 for _, v in scores)


def _shown(scores: Scores, scale: float = 1.0) -> str:
    text = ", ".join(f"{name}={scale * v:g}" for name, v in scores[:SHOWN])
    return text + (", ..." if len(scores) > SHOWN else "")


def converted_message(scores: Scores) -> str:
    """The one line saying that fractions given as probe scores were converted to percent."""
    return (
        f"every percent score given is at most 1 ({_shown(scores)}): read as fractions and "
        f"converted to percent ({_shown(scores, 100.0)}); give percentages (0-100) to silence "
        "this"
    )


def kept_message(scores: Scores) -> str:
    """The line for scores of at most 1 that are kept as percentages: each is a score some
    model has on its benchmark, so a weak model's is as likely as fractions."""
    return (
        f"every percent score given is at most 1 ({_shown(scores)}): kept as percentages, as "
        "scores this low are seen on these benchmarks; multiply by 100 if they are fractions"
    )


def beside_percent_messages(small: Scores, percent: Scores) -> list[str]:
    """One message per fraction-like score given beside percent ones (none without both)."""
    if not small or not percent:
        return []
    beside = _shown(percent)
    return [
        f"{name}={v:g} looks like a fraction beside percent scores ({beside}): scores are "
        f"percentages (0-100); give {name}={100 * v:g} if {v:g} is a fraction"
        for name, v in small
    ]


def fractional_threshold_messages(
    criteria: Iterable[tuple[str, str, float]], percent: Iterable[str]
) -> list[str]:
    """One message per criterion `(benchmark, op, threshold)` whose threshold lies strictly
    between 0 and 1 on a `percent` benchmark: P(criterion) would be ~1 (or ~0) silently."""
    on_percent = set(percent)
    return [
        f"--require: {name}{op}{threshold:g} on a percent benchmark (0-100) looks like a "
        f"fraction; give {name}{op}{100 * threshold:g} for {100 * threshold:g}%"
        for name, op, threshold in criteria
        if name in on_percent and 0.0 < threshold < 1.0
    ]


def fit_fraction_messages(columns: Mapping[str, Sequence[float]]) -> list[str]:
    """Warnings for `BenchPress.fit` on percent `columns` (benchmark -> its scores): one for
    the whole frame when every column lies in 0-1, else one naming the columns that do."""
    fractional = [
        name
        for name, values in columns.items()
        if all_fractions([(name, float(v)) for v in values])
    ]
    if not fractional:
        return []
    fix = (
        "multiply by 100 if they are fractions, or give the column scale 'unbounded' if it is "
        "on another scale"
    )
    if len(fractional) == len(columns):
        return [
            f"every percent score of the frame lies in 0-1 ({len(columns)} benchmarks): "
            f"BenchPress.fit takes percentages (0-100); {fix}"
        ]
    named = ", ".join(fractional[:SHOWN]) + (", ..." if len(fractional) > SHOWN else "")
    return [
        f"percent benchmarks of the frame in 0-1 beside others in 0-100 ({named}): scores "
        f"are percentages; {fix}"
    ]
