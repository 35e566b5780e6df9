"""The method page's figures, drawn from stored `benchpress evaluate` results (docs/assets/data/).

One function per figure: the results as `evaluate --json` writes them in, a matplotlib figure
out. Kept apart from the hook (`figures.py`) so each can be drawn and checked on its own data.
"""

from __future__ import annotations

from typing import Any

LEVELS = (50, 80, 90, 95)
# the methods as the page's tables name them, in the tables' order
NAMES = {
    "ours": "ours (default)",
    "ours_plain": "ours without side information",
    "reference": "BenchPress recipe, run here",
    "column_mean": "column mean",
}
COLORS = {"ours": "C0", "ours_plain": "C9", "reference": "C1", "column_mean": "C7"}


def _plt():
    import matplotlib  # deferred: only when a figure is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # deferred: as above

    return plt


def calibration(paper: dict[str, Any]):
    """Nominal against empirical coverage of the held-out cells, and the width it costs."""
    plt = _plt()
    fig, (cov, width) = plt.subplots(1, 2, figsize=(9, 3.6))
    cov.plot([0.45, 1], [0.45, 1], color="0.6", linestyle=":", label="perfect calibration")
    for name, entry in paper["methods"].items():
        holdout = entry["holdout"]
        if holdout.get("coverage_90") is None:
            continue  # the recipe run here exposes no intervals
        nominal = [level / 100 for level in LEVELS]
        cov.plot(
            nominal,
            [holdout[f"coverage_{level}"] for level in LEVELS],
            marker="o",
            color=COLORS.get(name),
            label=NAMES.get(name, name),
        )
        width.plot(
            LEVELS,
            [holdout[f"median_width_{level}"] for level in LEVELS],
            marker="o",
            color=COLORS.get(name),
        )
    cov.set(xlabel="nominal level", ylabel="coverage (median fold)", title="coverage")
    cov.legend(fontsize=8, loc="upper left")
    width.set(xlabel="level (%)", ylabel="points", title="median width, percent benchmarks")
    for ax in (cov, width):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def peers(paper: dict[str, Any]):
    """Held-out MedAE, 5-probe MedAE and ranking accuracy of every method, and the recipe's
    published figures where BenchPress states them."""
    plt = _plt()
    panels = [
        ("held-out MedAE (points)", "holdout", "medae", "held-out MedAE"),
        ("5-probe MedAE, hidden cells", "probe", "medae_hidden", None),
        ("ranking accuracy (%)", "holdout", "ranking_accuracy", "ranking accuracy"),
    ]
    published = {row["figure"]: row.get("benchpress_published") for row in paper.get("peers", [])}
    names = list(paper["methods"])
    fig, axes = plt.subplots(1, len(panels), figsize=(10, 2.8), sharey=True)
    for ax, (title, part, key, peer) in zip(axes, panels, strict=True):
        labels, values, colors = [], [], []
        for name in names:
            value = paper["methods"][name].get(part, {}).get(key)
            if value is None:
                continue
            labels.append(NAMES.get(name, name))
            values.append(value * 100 if key == "ranking_accuracy" else value)
            colors.append(COLORS.get(name, "C3"))
        if peer and published.get(peer) is not None:
            labels.append("BenchPress, published")
            value = published[peer]
            values.append(value * 100 if key == "ranking_accuracy" else value)
            colors.append("C3")
        positions = range(len(labels))
        ax.barh(list(positions), values, color=colors)
        ax.set_yticks(list(positions), labels, fontsize=8)
        for y, value in zip(positions, values, strict=True):
            ax.text(value, y, f" {value:.1f}" if value >= 50 else f" {value:.2f}", va="center")
        ax.set_title(title, fontsize=9)
        if key == "ranking_accuracy":
            ax.set_xlim(50, 100)
        else:
            ax.set_xlim(0, max(values) * 1.25)
    axes[0].invert_yaxis()
    fig.tight_layout()
    return fig


def probes(sweep: dict[str, Any]):
    """MedAE of a new release's other cells against the number of its scores revealed."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 3.4))
    rows = sweep["pooled"]
    for name in dict.fromkeys(row["method"] for row in rows):
        mine = sorted((r for r in rows if r["method"] == name), key=lambda r: r["n_probes"])
        ax.plot(
            [r["n_probes"] for r in mine],
            [r["medae"] for r in mine],
            marker="o",
            color=COLORS.get(name),
            label=NAMES.get(name, name),
        )
    ax.set(xlabel="scores revealed per new model", ylabel="MedAE of its other cells (points)")
    ax.set_xticks(sweep["protocol"]["n_probes"])
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def future(results: dict[str, Any]):
    """Error and 90% coverage per release quarter: fitted on the earlier models only."""
    plt = _plt()
    fig, (err, cov) = plt.subplots(1, 2, figsize=(10, 3.4))
    quarters = list(dict.fromkeys(row["quarter"] for row in results["quarters"]))
    for name in dict.fromkeys(row["method"] for row in results["quarters"]):
        mine = {r["quarter"]: r for r in results["quarters"] if r["method"] == name}
        xs = [q for q in quarters if q in mine]
        style = {"marker": "o", "color": COLORS.get(name), "label": NAMES.get(name, name)}
        err.plot(xs, [mine[q]["medae"] for q in xs], **style)
        coverage = [mine[q]["coverage"] for q in xs]
        if all(c == c for c in coverage):  # NaN: no intervals (the column mean)
            cov.plot(xs, coverage, **style)
    nominal = cov.axhline(0.9, color="0.6", linestyle=":")
    err.set(xlabel="release quarter", ylabel="MedAE (points)", title="error of new releases")
    err.set_ylim(bottom=0)
    cov.set(xlabel="release quarter", ylabel="share inside", title="90% interval coverage")
    err.legend(fontsize=8)
    cov.legend([nominal], ["nominal 0.90"], fontsize=8, loc="lower right")  # methods: left
    for ax in (err, cov):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig
