"""Percent scores that look like fractions (0.8 for 80%), for `FractionScoresWarning`.

A percent score in (0, 1] is almost surely a fraction: given as is, the answer would be for a
near-zero model on that benchmark, silently. `predict` (and `predict_benchmark`) warn once when
every percent score given is one, and once per such score beside percent scores above 1, naming
the benchmark (or model) and the value. Only percent scores are passed in here: Elo, ratings,
dollars and other open scales are never looked at.
"""

from __future__ import annotations

from collections.abc import Sequence

Scores = Sequence[tuple[str, float]]


def split_fractions(scores: Scores) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """(scores in (0, 1]: fraction-like, scores above 1: plainly percent); zeros are neither."""
    small = [(name, v) for name, v in scores if 0.0 < v <= 1.0]
    percent = [(name, v) for name, v in scores if v > 1.0]
    return small, percent


def beside_percent_messages(small: Scores, percent: Scores) -> list[str]:
    """One message per fraction-like score given beside percent ones (none without both)."""
    if not small or not percent:
        return []
    beside = ", ".join(f"{name}={v:g}" for name, v in percent[:3])
    beside += ", ..." if len(percent) > 3 else ""
    return [
        f"{name}={v:g} looks like a fraction beside percent scores ({beside}): scores are "
        f"percentages (0-100); give {name}={100 * v:g} if {v:g} is a fraction"
        for name, v in small
    ]
