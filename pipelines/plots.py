"""PNG plots of a fit for Dagster asset metadata (matplotlib, headless Agg backend)."""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def _png(fig: plt.Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()


def markdown_image(png: bytes, alt: str) -> str:
    """Inline image for `MetadataValue.md` (Dagster renders data URIs in markdown)."""
    return f"![{alt}](data:image/png;base64,{base64.b64encode(png).decode()})"


def spectrum_plot(singular: Sequence[float]) -> bytes:
    energy = np.asarray(singular, dtype=float) ** 2
    share = energy / energy.sum() if energy.sum() else energy
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.bar(np.arange(1, len(share) + 1), share, color="#3b6ea5")
    ax.plot(np.arange(1, len(share) + 1), np.cumsum(share), color="#c4572a", marker="o")
    ax.set_xlabel("factor")
    ax.set_ylabel("share of variance")
    ax.set_title("Singular value spectrum (bars) and cumulative share")
    ax.set_ylim(0, 1.05)
    return _png(fig)


LABEL_OFFSET_PT = 4  # points between a benchmark's dot and its label


def _label_offsets(x: float, y: float, centre: tuple[float, float]) -> list[tuple[int, int]]:
    """Where a label may go (signs of its x and y offset), pointing into the plot first: a
    point on the right edge is labelled to its left, so the label stays inside the axes."""
    sx = -1 if x > centre[0] else 1
    sy = -1 if y > centre[1] else 1
    return [(sx, sy), (sx, -sy), (-sx, sy), (-sx, -sy)]


def place_labels(ax: plt.Axes, xy: np.ndarray, names: Sequence[str], label_top: int) -> list[str]:
    """Label the `label_top` benchmarks farthest from the origin, each where its label fits
    inside the axes without covering a label already placed; a benchmark whose label fits
    nowhere is skipped for the next farthest (at most 3 x `label_top` tried). Returns the
    labelled names, farthest first."""
    renderer = ax.figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    centre = (float(np.mean(ax.get_xlim())), float(np.mean(ax.get_ylim())))
    placed: list = []
    labelled: list[str] = []
    order = np.argsort(-np.hypot(xy[:, 0], xy[:, 1]), kind="stable")
    for j in order[: 3 * label_top]:
        if len(labelled) == label_top:
            break
        for sx, sy in _label_offsets(float(xy[j, 0]), float(xy[j, 1]), centre):
            text = ax.annotate(
                names[j],
                (xy[j, 0], xy[j, 1]),
                xytext=(sx * LABEL_OFFSET_PT, sy * LABEL_OFFSET_PT),
                textcoords="offset points",
                ha="left" if sx > 0 else "right",
                va="bottom" if sy > 0 else "top",
                fontsize=7,
            )
            box = text.get_window_extent(renderer)
            inside = (
                box.x0 >= frame.x0
                and box.x1 <= frame.x1
                and box.y0 >= frame.y0
                and box.y1 <= frame.y1
            )
            if inside and not any(box.overlaps(other) for other in placed):
                placed.append(box)
                labelled.append(names[j])
                break
            text.remove()
    return labelled


def loadings_figure(
    loadings: np.ndarray, names: Sequence[str], label_top: int = 12
) -> tuple[plt.Figure, list[str]]:
    """The two-factor plane of the benchmarks, the extremes labelled (`place_labels`)."""
    fig, ax = plt.subplots(figsize=(6, 5))
    ax.scatter(loadings[:, 0], loadings[:, 1], s=12, color="#3b6ea5")
    ax.margins(0.12)  # room inside the frame for the labels of the outermost points
    ax.axhline(0, color="#999", lw=0.5)
    ax.axvline(0, color="#999", lw=0.5)
    ax.set_xlabel("factor 1")
    ax.set_ylabel("factor 2")
    ax.set_title("Benchmarks in the two-factor plane (the farthest labelled)")
    fig.canvas.draw()  # fixes the limits and the text sizes the labels are placed by
    labelled = place_labels(ax, loadings, names, label_top)
    return fig, labelled


def loadings_plot(loadings: np.ndarray, names: Sequence[str], label_top: int = 12) -> bytes:
    fig, _ = loadings_figure(loadings, names, label_top)
    return _png(fig)


def predicted_vs_observed_plot(actual: Sequence[float], predicted: Sequence[float]) -> bytes:
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    ax.scatter(actual, predicted, s=6, alpha=0.5, color="#3b6ea5")
    ax.plot([0, 100], [0, 100], color="#c4572a", lw=1)
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.set_xlabel("observed (held out)")
    ax.set_ylabel("predicted")
    ax.set_title("Held-out predictions, percent benchmarks")
    return _png(fig)


def matrix_heatmap_plot(observed_z: np.ndarray, predicted_z: np.ndarray) -> bytes:
    """Observed vs predicted cells side by side (z-space, so every scale shares one colour bar).

    Rows (models) and columns (benchmarks) are ordered by their mean prediction, which makes
    the low-rank structure visible as a smooth gradient; missing observed cells stay blank.
    """
    rows = np.argsort(predicted_z.mean(axis=1))
    cols = np.argsort(predicted_z.mean(axis=0))
    limit = float(np.nanpercentile(np.abs(predicted_z), 99)) or 1.0
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.5), sharey=True)
    panels = (("observed", observed_z), ("predicted (completed)", predicted_z))
    for ax, (title, z) in zip(axes, panels, strict=True):
        shown = np.ma.masked_invalid(z[np.ix_(rows, cols)])
        image = ax.imshow(shown, aspect="auto", cmap="viridis", vmin=-limit, vmax=limit)
        ax.set_title(f"{title}: {np.isfinite(z).sum():,} cells")
        ax.set_xlabel("benchmarks (by mean)")
    axes[0].set_ylabel("models (by mean)")
    fig.colorbar(image, ax=axes, label="score (column z-score in logit space)")
    return _png(fig)
