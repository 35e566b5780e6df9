"""MkDocs hook: the method page's figures, drawn at build time from stored evaluation results.

A page marks a place with `<!-- figure: calibration -->`; the hook draws the figure (SVG, into
docs/assets/figures/) from its results file in docs/assets/data/ and puts it there with a
caption stating the command that produced the numbers, the matrix it ran on and when. The
evaluations themselves take too long for a docs build; `python docs/hooks/evaluate_runs.py`
reruns them and records each file's inputs (`provenance.json`). A results file whose inputs
(the matrix, the folds) or whose own bytes changed since that run is a warning,
which `mkdocs build --strict` turns into a failure: the page never shows stale numbers
silently. So is a marker naming no figure, or a figure whose data is missing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import logging
import re
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

log = logging.getLogger("mkdocs.hooks.figures")
HOOKS = Path(__file__).resolve().parent
MARKER = re.compile(r"<!-- figure: ([a-z_]+) -->")


def _sibling(name: str) -> ModuleType:
    """A module beside this hook (MkDocs loads hooks by path, not as a package)."""
    spec = importlib.util.spec_from_file_location(f"docs_hooks_{name}", HOOKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Figure(NamedTuple):
    data: str  # results file in docs/assets/data/
    draw: str  # function of figure_plots
    alt: str  # what the figure shows, for the image's alt text and the caption


FIGURES = {
    "calibration": Figure(
        "evaluate_paper.json",
        "calibration",
        "Coverage of the held-out cells against the nominal level, and the median width",
    ),
    "peers": Figure(
        "evaluate_paper.json",
        "peers",
        "Held-out MedAE, 5-probe MedAE and ranking accuracy per method",
    ),
    "probes": Figure(
        "probes_future.json",
        "probes",
        "MedAE of new releases against the number of scores revealed",
    ),
    "future": Figure(
        "evaluate_future.json",
        "future",
        "MedAE and 90% coverage of new releases per release quarter",
    ),
}


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def stale_reasons(data_dir: Path, filename: str, root: Path) -> list[str]:
    """Why the stored results may no longer be what their command gives; [] when current."""
    path = data_dir / filename
    if not path.is_file():
        return [f"{filename} is missing"]
    provenance_path = data_dir / "provenance.json"
    provenance = json.loads(provenance_path.read_text()) if provenance_path.is_file() else {}
    record = provenance.get(filename)
    if record is None:
        return [f"{filename} has no record in provenance.json"]
    reasons = []
    if record.get("sha256") != sha256_file(path):
        reasons.append(f"{filename} was edited after its run")
    for relpath, digest in record.get("inputs", {}).items():
        source = root / relpath
        if not source.is_file():
            reasons.append(f"its input {relpath} is gone")
        elif sha256_file(source) != digest:
            reasons.append(f"its input {relpath} changed since the run")
    return reasons


def matrix_description(results: dict) -> str:
    """Which matrix the results are of: the paper matrix, or a snapshot by version."""
    protocol = results.get("protocol", {})
    if protocol.get("source") == "snapshot":
        return f"snapshot {protocol.get('version')}"
    shape = ""
    if protocol.get("n_models"):
        shape = f", {protocol['n_models']} x {protocol['n_benchmarks']}"
    return f"the BenchPress paper matrix (snapshot microsoft/benchpress-v1{shape})"


def svg_bytes(fig) -> bytes:
    """The figure as SVG, byte-identical for identical figures (no date, fixed ids)."""
    import matplotlib  # deferred: only when drawing

    matplotlib.rcParams["svg.hashsalt"] = "benchpress-docs"
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: smaller, searchable
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    import matplotlib.pyplot as plt  # deferred: as above

    plt.close(fig)
    return buffer.getvalue()


def draw_all(docs_dir: Path, root: Path) -> dict[str, dict]:
    """Draw every figure whose data exists, warning of stale data; name -> {"results",
    "record"} (the results drawn and their provenance record)."""
    plots = _sibling("figure_plots")
    data_dir = docs_dir / "assets" / "data"
    out_dir = docs_dir / "assets" / "figures"
    provenance_path = data_dir / "provenance.json"
    provenance = json.loads(provenance_path.read_text()) if provenance_path.is_file() else {}
    drawn: dict[str, dict] = {}
    for name, figure in FIGURES.items():
        stale = stale_reasons(data_dir, figure.data, root)
        for reason in stale:
            log.warning("figures: %s: %s; rerun `python docs/hooks/evaluate_runs.py`", name, reason)
        path = data_dir / figure.data
        if not path.is_file():
            continue
        results = json.loads(path.read_text())
        svg = svg_bytes(getattr(plots, figure.draw)(results))
        out = out_dir / f"{name}.svg"
        if not out.is_file() or out.read_bytes() != svg:  # unchanged: no rewrite, no reload
            out_dir.mkdir(parents=True, exist_ok=True)
            out.write_bytes(svg)
        drawn[name] = {"results": results, "record": provenance.get(figure.data, {})}
    return drawn


def caption(name: str, entry: dict, depth: int) -> str:
    """The figure's caption: what it shows, the command, the matrix, when it ran."""
    figure = FIGURES[name]
    record = entry["record"]
    up = "../" * depth
    when = f"run {record['run_on']}" if record.get("run_on") else "run date unknown"
    if record.get("commit"):
        head, _, changes = record["commit"].partition("+")
        when += f" at commit {head}" + (" with local changes" if changes else "")
    return (
        f"![{figure.alt}]({up}assets/figures/{name}.svg)\n\n"
        f"*{figure.alt}. From `{record.get('command', '?')}` on "
        f"{matrix_description(entry['results'])}, {when} "
        f"([results]({up}assets/data/{figure.data})).*"
    )


_drawn: dict[str, dict] = {}


def on_pre_build(config) -> None:
    docs_dir = Path(config["docs_dir"])
    _drawn.clear()
    _drawn.update(draw_all(docs_dir, docs_dir.parent))


def on_page_markdown(markdown: str, page, config, files) -> str:
    if not MARKER.search(markdown):
        return markdown
    depth = page.file.src_uri.count("/")

    def render(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in FIGURES:
            log.warning("figures: %s names no figure %r", page.file.src_uri, name)
            return ""
        if name not in _drawn:
            return (
                f'!!! warning "Figure missing"\n    The results of the {name} figure are missing.'
            )
        return caption(name, _drawn[name], depth)

    return MARKER.sub(render, markdown)
