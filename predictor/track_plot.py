"""The plot of a tracked run: each target's predicted trajectory over the checkpoints with
its interval band, the observed probe scores, and P(all criteria) when there are criteria.

matplotlib with the Agg backend (no display needed), PNG or SVG by the file's suffix. The
output is deterministic: the same run gives the same bytes (no dates in the metadata, a fixed
SVG id salt, text drawn as paths). Names are data: `$` would start mathtext, so labels are
escaped; control characters are shown as escapes.

Every drawn series carries a gid (`trajectory-K`, `band-K`, `target-observed-K`,
`probe-K`, `p-all`), which the SVG keeps as element ids: tests and tools can count them."""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

SUFFIXES = (".png", ".svg")
MEET_LINE = 0.9


@dataclass(frozen=True)
class TargetSeries:
    """One target benchmark over the checkpoints (one value per step, in step order)."""

    benchmark: str
    score: Sequence[float]
    low: Sequence[float]
    high: Sequence[float]
    observed: Sequence[bool]  # the checkpoint's own score (a probe), not a prediction


@dataclass(frozen=True)
class PlotSummary:
    path: Path
    trajectories: int
    bands: int
    probe_series: int
    probability_series: int


def plot_format(path: str | Path) -> str:
    """ "png" or "svg" from the suffix; anything else is the caller's error (ValueError)."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"--plot {path}: the file must end in .png or .svg, not {suffix!r}")
    return suffix[1:]


def label(text: str) -> str:
    """A name as plot text: control characters escaped (every text is also drawn with
    `parse_math=False`, so `$` is a dollar sign, not mathtext)."""
    return "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text
    )


def render(
    steps: Sequence[int],
    targets: Sequence[TargetSeries],
    probes: Mapping[str, Sequence[float | None]],
    fmt: str,
    *,
    title: str = "",
    level: float = 0.9,
    p_all: Sequence[float] | None = None,
    criteria: str = "",
) -> tuple[bytes, dict[str, int]]:
    """(the image's bytes, series counts). `probes`: benchmark -> observed score per step
    (None where that checkpoint did not run it)."""
    import matplotlib  # deferred: matplotlib is the `pipeline` extra's, needed only for --plot

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure  # deferred: after the backend is chosen

    panels = len(targets) + (1 if probes else 0) + (1 if p_all is not None else 0)
    cols = min(3, max(1, panels))
    rows = math.ceil(panels / cols)
    with matplotlib.rc_context(
        {"svg.hashsalt": "benchpress-track", "svg.fonttype": "path", "path.simplify": False}
    ):
        fig = Figure(figsize=(4.2 * cols, 3.0 * rows), dpi=100, layout="constrained")
        axes = fig.subplots(rows, cols, squeeze=False).ravel()
        counts = {"trajectories": 0, "bands": 0, "probe_series": 0, "probability_series": 0}
        k = 0
        for t, series in enumerate(targets):
            ax = axes[k]
            k += 1
            band = ax.fill_between(steps, series.low, series.high, alpha=0.25, linewidth=0)
            band.set_gid(f"band-{t}")
            (line,) = ax.plot(steps, series.score, marker="o", markersize=3)
            line.set_gid(f"trajectory-{t}")
            counts["trajectories"] += 1
            counts["bands"] += 1
            seen = [
                (s, v) for s, v, o in zip(steps, series.score, series.observed, strict=True) if o
            ]
            if seen:
                dots = ax.scatter(*zip(*seen, strict=True), marker="s", color="black", zorder=3)
                dots.set_gid(f"target-observed-{t}")
            ax.set_title(label(series.benchmark), fontsize=9, parse_math=False)
            ax.set_xlabel("step", fontsize=8)
            ax.tick_params(labelsize=7)
        if probes:
            ax = axes[k]
            k += 1
            for p, (benchmark, values) in enumerate(probes.items()):
                points = [(s, v) for s, v in zip(steps, values, strict=True) if v is not None]
                if not points:
                    continue
                (line,) = ax.plot(
                    *zip(*points, strict=True), marker="s", markersize=3, label=label(benchmark)
                )
                line.set_gid(f"probe-{p}")
                counts["probe_series"] += 1
            ax.set_title("observed probe scores", fontsize=9)
            ax.set_xlabel("step", fontsize=8)
            ax.tick_params(labelsize=7)
            for text in ax.legend(fontsize=6).get_texts():
                text.set_parse_math(False)
        if p_all is not None:
            ax = axes[k]
            k += 1
            (line,) = ax.plot(steps, p_all, marker="o", markersize=3, color="tab:green")
            line.set_gid("p-all")
            counts["probability_series"] += 1
            ax.axhline(MEET_LINE, linestyle="--", color="grey", linewidth=0.8)
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(
                label(f"P(all: {criteria})" if criteria else "P(all criteria)"),
                fontsize=9,
                parse_math=False,
            )
            ax.set_xlabel("step", fontsize=8)
            ax.tick_params(labelsize=7)
        for ax in axes[k:]:
            ax.set_visible(False)
        heading = f"{title}: " if title else ""
        fig.suptitle(
            label(f"{heading}predicted scores, {round(level * 100, 1):g}% intervals"),
            fontsize=10,
            parse_math=False,
        )
        buffer = io.BytesIO()
        metadata = {"Date": None} if fmt == "svg" else {"Software": None}
        fig.savefig(buffer, format=fmt, metadata=metadata)
    return buffer.getvalue(), counts


def write_plot(path: str | Path, *args, **kwargs) -> PlotSummary:
    """`render` into `path` (its suffix picks the format)."""
    path = Path(path)
    data, counts = render(*args, fmt=plot_format(path), **kwargs)
    path.write_bytes(data)
    return PlotSummary(path, **counts)
