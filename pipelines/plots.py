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


def loadings_plot(loadings: np.ndarray, names: Sequence[str], label_top: int = 12) -> bytes:
    fig, ax = plt.subplots(figsize=(6, 5))
    ax.scatter(loadings[:, 0], loadings[:, 1], s=12, color="#3b6ea5")
    norms = np.hypot(loadings[:, 0], loadings[:, 1])
    for j in np.argsort(-norms)[:label_top]:
        ax.annotate(names[j], (loadings[j, 0], loadings[j, 1]), fontsize=7)
    ax.axhline(0, color="#999", lw=0.5)
    ax.axvline(0, color="#999", lw=0.5)
    ax.set_xlabel("factor 1")
    ax.set_ylabel("factor 2")
    ax.set_title("Benchmarks in the two-factor plane")
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
