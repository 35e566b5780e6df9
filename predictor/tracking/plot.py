"""The plot of a tracked run: each target's predicted trajectory over the checkpoints with
its interval band, the observed probe scores, and P(all criteria) when there are criteria.

matplotlib with the Agg backend (no display needed), PNG or SVG by the file's suffix. The
output is deterministic: the same run gives the same bytes (no dates in the metadata, a fixed
SVG id salt, text drawn as paths). Names are data: `$` would start mathtext, so labels are
escaped; control characters are shown as escapes.

One panel per target predicted somewhere in the run (a target observed at every checkpoint
is a probe: it is drawn once, in the probe panel), then the probe panel and P(all); the grid is
sized to the panels (a short last row has wider panels), so no cell is left empty. Every score
is drawn once: a target's panel marks its observed checkpoints as observed (not also as
predicted), and the probe panel leaves out the probes a target panel shows. A single
checkpoint's interval is an error bar (a band needs two steps). Steps that double (1000, 2000,
4000, 8000) get a log-scaled step axis, ticked at the steps. Each `--require` threshold is a
dashed line on its benchmark's panel, and one legend names the marks drawn, as drawn.

Every drawn series carries a gid (`trajectory-K`, `band-K`, `target-observed-K`,
`probe-K`, `p-all`, `threshold-I` for the I-th criterion, `legend`), and every panel one
(`panel-target-K`, `panel-probes`, `panel-p-all`), which the SVG keeps as element ids: tests
and tools can count them."""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from predictor.tracking.checkpoints import Criterion, TrackInputError, parse_criteria

if TYPE_CHECKING:  # matplotlib is imported only when a plot is drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

SUFFIXES = (".png", ".svg")
MEET_LINE = 0.9
PREDICTED = "tab:blue"
OBSERVED = "black"
THRESHOLD_COLOR = "tab:red"


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


def _criteria(criteria: str | Sequence[Criterion]) -> list[Criterion]:
    """The criteria as objects: the command passes them joined as text (`str(c)` each)."""
    if not isinstance(criteria, str):
        return list(criteria)
    if not criteria.strip():
        return []
    try:
        return parse_criteria(criteria)
    except TrackInputError:
        return []  # text only a title can show: no threshold lines


def _grid(fig: Figure, panels: int, max_cols: int = 3) -> list[Axes]:
    """`panels` axes on rows of up to `max_cols`; a shorter last row is spread over the full
    width, so the grid has no empty cell."""
    cols = min(max_cols, max(1, panels))
    rows = math.ceil(panels / cols)
    outer = fig.add_gridspec(rows, 1)
    axes: list[Axes] = []
    for r in range(rows):
        in_row = min(cols, panels - r * cols)
        row = outer[r].subgridspec(1, in_row)
        axes.extend(fig.add_subplot(row[0, c]) for c in range(in_row))
    return axes


def log_steps(steps: Sequence[int]) -> bool:
    """Whether the steps grow geometrically (each about the same multiple, at least 1.5, of
    the last: 1000, 2000, 4000, 8000), so a log-scaled axis spaces them evenly."""
    ordered = sorted(set(steps))
    if len(ordered) < 3 or ordered[0] <= 0:
        return False
    ratios = [b / a for a, b in zip(ordered, ordered[1:], strict=False)]
    return min(ratios) >= 1.5 and max(ratios) / min(ratios) <= 1.25


def _panel(ax: Axes, gid: str, title: str, steps: Sequence[int] = ()) -> None:
    ax.set_gid(gid)
    ax.set_title(label(title), fontsize=9, parse_math=False)
    ax.set_xlabel("step", fontsize=8)
    ax.tick_params(labelsize=7)
    if log_steps(steps):
        from matplotlib.ticker import FixedLocator, NullLocator  # deferred: as in `render`

        ax.set_xscale("log", base=2)
        ax.set_xlabel("step (log scale)", fontsize=8)
        ax.xaxis.set_major_locator(FixedLocator(sorted(set(steps))))
        ax.xaxis.set_major_formatter(lambda value, _: f"{value:g}")
        ax.xaxis.set_minor_locator(NullLocator())


def _threshold(ax: Axes, index: int, criterion: Criterion, text: str | None = None) -> None:
    """The criterion's dashed line (`text`: its entry in the panel's own legend)."""
    line = ax.axhline(
        criterion.threshold, linestyle="--", color=THRESHOLD_COLOR, linewidth=1.0, zorder=2.5
    )
    line.set_gid(f"threshold-{index}")
    if text is not None:
        line.set_label(text)


def render(
    steps: Sequence[int],
    targets: Sequence[TargetSeries],
    probes: Mapping[str, Sequence[float | None]],
    fmt: str,
    *,
    title: str = "",
    level: float = 0.9,
    p_all: Sequence[float] | None = None,
    criteria: str | Sequence[Criterion] = "",
) -> tuple[bytes, dict[str, int]]:
    """(the image's bytes, series counts). `probes`: benchmark -> observed score per step
    (None where that checkpoint did not run it). `criteria`: the `--require` criteria, as
    `Criterion`s or their text joined with ", "."""
    import matplotlib  # deferred: matplotlib is the `pipeline` extra's, needed only for --plot

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure  # deferred: after the backend is chosen
    from matplotlib.lines import Line2D  # deferred: as above
    from matplotlib.patches import Patch  # deferred: as above

    rules = _criteria(criteria)
    criteria_text = criteria if isinstance(criteria, str) else ", ".join(map(str, criteria))
    probe_names = {b for b, values in probes.items() if any(v is not None for v in values)}
    # a target observed at every checkpoint is a probe throughout: drawn in the probe panel
    drawn = [
        (t, series)
        for t, series in enumerate(targets)
        if not (all(series.observed) and series.benchmark in probe_names)
    ]
    # a probe a target panel shows (observed at some checkpoints) is not drawn again
    on_targets = {series.benchmark for _, series in drawn}
    probes = {b: v for b, v in probes.items() if b not in on_targets}
    panels = len(drawn) + (1 if probes else 0) + (1 if p_all is not None else 0)
    cols = min(3, max(1, panels))
    rows = math.ceil(panels / cols)
    with matplotlib.rc_context(
        {"svg.hashsalt": "benchpress-track", "svg.fonttype": "path", "path.simplify": False}
    ):
        fig = Figure(figsize=(4.2 * cols, 3.0 * rows), dpi=100, layout="constrained")
        axes = iter(_grid(fig, panels))
        counts = {"trajectories": 0, "bands": 0, "probe_series": 0, "probability_series": 0}
        any_observed = False
        placed: set[int] = set()  # criteria drawn
        single = len(steps) == 1  # one checkpoint: its interval is an error bar
        for t, series in drawn:
            ax = next(axes)
            predicted = [i for i, o in enumerate(series.observed) if not o]
            if single:
                low, high = series.low[0], series.high[0]
                band = ax.vlines(steps, [low], [high], color=PREDICTED, alpha=0.6, linewidth=6)
            else:
                band = ax.fill_between(steps, series.low, series.high, alpha=0.25, linewidth=0)
                band.set_color(PREDICTED)
            band.set_gid(f"band-{t}")
            # markers on the predicted checkpoints only: an observed one is drawn as observed
            (line,) = ax.plot(
                steps,
                series.score,
                marker="o",
                markersize=3,
                color=PREDICTED,
                markevery=predicted,
            )
            line.set_gid(f"trajectory-{t}")
            counts["trajectories"] += 1
            counts["bands"] += 1
            seen = [
                (s, v) for s, v, o in zip(steps, series.score, series.observed, strict=True) if o
            ]
            if seen:
                any_observed = True
                dots = ax.scatter(*zip(*seen, strict=True), marker="s", color=OBSERVED, zorder=3)
                dots.set_gid(f"target-observed-{t}")
            for i, rule in enumerate(rules):
                if rule.benchmark == series.benchmark:
                    _threshold(ax, i, rule)
                    placed.add(i)
            _panel(ax, f"panel-target-{t}", series.benchmark, steps)
        if probes:
            ax = next(axes)
            for p, (benchmark, values) in enumerate(probes.items()):
                points = [(s, v) for s, v in zip(steps, values, strict=True) if v is not None]
                if not points:
                    continue
                (line,) = ax.plot(
                    *zip(*points, strict=True), marker="s", markersize=3, label=label(benchmark)
                )
                line.set_gid(f"probe-{p}")
                counts["probe_series"] += 1
                for i, rule in enumerate(rules):
                    if rule.benchmark == benchmark and i not in placed:
                        # red like every threshold, named in the panel's legend
                        _threshold(ax, i, rule, text=label(str(rule)))
                        placed.add(i)
            _panel(ax, "panel-probes", "observed probe scores", steps)
            for text in ax.legend(fontsize=6).get_texts():
                text.set_parse_math(False)
        if p_all is not None:
            ax = next(axes)
            (line,) = ax.plot(
                steps, p_all, marker="o", markersize=3, color="tab:green", label="P(all)"
            )
            line.set_gid("p-all")
            counts["probability_series"] += 1
            meet = f"P = {MEET_LINE:g}"
            ax.axhline(MEET_LINE, linestyle="--", color="grey", linewidth=0.8, label=meet)
            ax.set_ylim(-0.02, 1.02)
            ax.legend(fontsize=6)
            _panel(
                ax,
                "panel-p-all",
                f"P(all: {criteria_text})" if criteria_text else "P(all criteria)",
                steps,
            )
        pct = f"{round(level * 100, 1):g}%"
        handles = []  # the marks drawn, as drawn
        if drawn:
            line_style = "" if single else "-"  # one checkpoint: a dot, no line
            handles.append(
                Line2D(
                    [],
                    [],
                    color=PREDICTED,
                    marker="o",
                    markersize=3,
                    linestyle=line_style,
                    label="predicted",
                )
            )
            interval = f"{pct} interval"
            handles.append(
                Line2D([], [], color=PREDICTED, alpha=0.6, linewidth=6, label=interval)
                if single
                else Patch(color=PREDICTED, alpha=0.25, linewidth=0, label=interval)
            )
        if any_observed:  # a target panel's observed checkpoints (black squares)
            handles.append(
                Line2D([], [], color=OBSERVED, marker="s", linestyle="", label="observed")
            )
        if placed:
            handles.append(
                Line2D([], [], color=THRESHOLD_COLOR, linestyle="--", label="required threshold")
            )
        if handles:
            legend = fig.legend(
                handles=handles, loc="outside lower center", ncols=len(handles), fontsize=7
            )
            legend.set_gid("legend")
        heading = f"{title}: " if title else ""
        fig.suptitle(
            label(f"{heading}predicted scores, {pct} intervals"),
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
