"""The Dagster UI's view of a refresh: fit figures that can be read (loadings labels inside the
axes, not on top of each other; settings as plain values, not one-point plots) and
`make dagster PORT=...`."""

from __future__ import annotations

import itertools
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np

from pipelines import plots
from pipelines.stages.figures import scalar_metadata
from predictor.drift import benchmark_loadings, completed_z
from predictor.snapshots.reader import list_versions, load_snapshot

REPO = Path(__file__).resolve().parents[2]
BUNDLED = REPO / "predictor" / "data" / "snapshots"


def bundled_loadings() -> tuple[np.ndarray, list[str]]:
    snapshot = load_snapshot(BUNDLED / list_versions(BUNDLED)[-1])
    z, names = completed_z(snapshot)
    return benchmark_loadings(z), list(names)


def test_loadings_labels_of_the_bundled_fit_sit_inside_the_axes_apart() -> None:
    loadings, names = bundled_loadings()
    assert len(names) > 150  # most of them clumped near factor 1 = 0.07
    fig, labelled = plots.loadings_figure(loadings, names, label_top=12)
    (ax,) = fig.axes
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    boxes = [t.get_window_extent(renderer) for t in ax.texts]
    assert [t.get_text() for t in ax.texts] == labelled
    assert len(labelled) == 12
    norms = np.hypot(loadings[:, 0], loadings[:, 1])
    assert labelled[0] == names[int(np.argmax(norms))]  # the extremes are the ones labelled
    for box in boxes:
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1, box
        assert frame.y0 <= box.y0 and box.y1 <= frame.y1, box
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b), (a, b)
    png = plots.loadings_plot(loadings, names)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")


def test_clumped_extremes_are_labelled_only_where_they_fit() -> None:
    """Thirty benchmarks at one extreme: a few labels, never a pile of them."""
    rng = np.random.default_rng(0)
    clump = np.column_stack([0.3 + rng.normal(0, 0.002, 30), 0.2 + rng.normal(0, 0.002, 30)])
    spread = rng.normal(0, 0.05, (40, 2))
    names = [f"benchmark_name_{i:02d}" for i in range(70)]
    fig, labelled = plots.loadings_figure(np.vstack([clump, spread]), names, label_top=12)
    (ax,) = fig.axes
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.texts]
    assert 1 <= len(labelled) < 12
    assert not any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2))


def test_settings_among_the_figures_are_plain_text_measurements_stay_numbers() -> None:
    figures = {
        "n_models": 240,
        "variance_share_top2": 0.71,
        "suspicious_cells": 31,
        "suspicious_threshold_z": 3.5,
        "singular_values": [3.0, 1.0],
        "content_hash": "abc",
        "reused": True,
    }
    assert scalar_metadata(figures) == {
        "n_models": 240,
        "variance_share_top2": 0.71,
        "suspicious_cells": 31,
        "suspicious_threshold_z": "3.5",
        "content_hash": "abc",
        "reused": True,
    }


def ui(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pipelines.ui", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_make_dagster_passes_port_to_the_launcher() -> None:
    dry = subprocess.run(
        ["make", "-n", "dagster", "PORT=3001"], cwd=REPO, capture_output=True, text=True
    )
    assert "-m pipelines.ui --port '3001'" in dry.stdout
    default = subprocess.run(["make", "-n", "dagster"], cwd=REPO, capture_output=True, text=True)
    assert "-m pipelines.ui " in default.stdout and "--port" not in default.stdout


def test_a_bad_or_taken_port_stops_before_anything_starts(tmp_path: Path) -> None:
    done = ui("--port", "abc")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "make dagster: error: PORT='abc' is not a port number (1 to 65535)"
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = ui("--port", str(port))
    assert done.returncode == 2
    assert done.stderr.startswith(f"make dagster: error: port {port} on 127.0.0.1 is not free (")
    assert f"`make dagster PORT={port + 1}`" in done.stderr
    assert "Dagster UI on" not in done.stdout
