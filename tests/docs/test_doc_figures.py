"""The method page's plots (docs/hooks/figures.py): drawn from the stored `benchpress evaluate`
results, captioned with the command and matrix that produced them, and refused by a strict
build when the stored results no longer match the data they were run on."""

from __future__ import annotations

import importlib.util
import json
import logging
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOOKS = ROOT / "docs" / "hooks"
DATA = ROOT / "docs" / "assets" / "data"
MATRIX = "pipelines/replay/microsoft.github.io/benchpress/data.json"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"test_hook_{name}", HOOKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def figures():
    return load("figures")


def page(name: str = "method.md") -> SimpleNamespace:
    return SimpleNamespace(file=SimpleNamespace(src_uri=name))


def copy_of_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A root with the stored results and the inputs they were run on: (root, docs dir)."""
    docs = tmp_path / "docs"
    shutil.copytree(DATA, docs / "assets" / "data")
    for relpath in {
        p for r in json.loads((DATA / "provenance.json").read_text()).values() for p in r["inputs"]
    }:
        (tmp_path / relpath).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / relpath, tmp_path / relpath)
    return tmp_path, docs


def test_stored_results_match_the_data_they_were_run_on(figures) -> None:
    runs = load("evaluate_runs").RUNS
    provenance = json.loads((DATA / "provenance.json").read_text())
    for name, figure in figures.FIGURES.items():
        assert figures.stale_reasons(DATA, figure.data, ROOT) == [], name
        (command,) = [cmd for out, cmd, _ in runs.values() if out == figure.data]
        assert provenance[figure.data]["command"] == command


def test_method_page_places_every_figure(figures) -> None:
    text = (ROOT / "docs" / "method.md").read_text()
    assert sorted(figures.MARKER.findall(text)) == sorted(figures.FIGURES)


def test_figures_are_captioned_with_command_matrix_and_run(figures, tmp_path) -> None:
    root, docs = copy_of_repo(tmp_path)
    figures._drawn.update(figures.draw_all(docs, root))
    out = figures.on_page_markdown("x\n\n<!-- figure: calibration -->\n", page(), None, None)
    record = json.loads((DATA / "provenance.json").read_text())["evaluate_paper.json"]
    assert "![Coverage of the held-out cells against the nominal level" in out
    assert "(assets/figures/calibration.svg)" in out
    command = "benchpress evaluate --quick --json --out evaluate_paper.json"
    matrix = "the BenchPress paper matrix (snapshot microsoft/benchpress-v1, 84 x 133)"
    assert f"From `{command}` on {matrix}," in out
    head, _, changes = record["commit"].partition("+")
    local = " with local changes" if changes else ""
    assert f"run {record['run_on']} at commit {head}{local} (" in out
    assert "([results](assets/data/evaluate_paper.json))" in out
    # a page one folder down links one folder up
    nested = figures.on_page_markdown("<!-- figure: probes -->", page("api/x.md"), None, None)
    assert "(../assets/figures/probes.svg)" in nested
    assert sorted(p.name for p in (docs / "assets" / "figures").iterdir()) == [
        "calibration.svg",
        "future.svg",
        "peers.svg",
        "probes.svg",
    ]


def test_plots_show_the_stored_numbers(figures, tmp_path) -> None:
    root, docs = copy_of_repo(tmp_path)
    figures.draw_all(docs, root)
    paper = json.loads((DATA / "evaluate_paper.json").read_text())
    peers = (docs / "assets" / "figures" / "peers.svg").read_text()
    for name in ("ours", "reference", "column_mean"):
        assert f"{paper['methods'][name]['holdout']['medae']:.2f}" in peers, name
        assert f"{paper['methods'][name]['probe']['medae_hidden']:.2f}" in peers, name
    assert "BenchPress, published" in peers and "4.60" in peers
    # the same results draw the same bytes: a rebuild leaves the file alone
    before = (docs / "assets" / "figures" / "peers.svg").read_bytes()
    figures.draw_all(docs, root)
    assert (docs / "assets" / "figures" / "peers.svg").read_bytes() == before


def test_changed_matrix_or_edited_results_fail_the_strict_build(figures, tmp_path, caplog) -> None:
    root, docs = copy_of_repo(tmp_path)
    matrix = root / MATRIX
    matrix.write_bytes(matrix.read_bytes() + b"\n")
    results = docs / "assets" / "data" / "evaluate_paper.json"
    results.write_text(results.read_text().replace('"quick": true', '"quick": false'))
    with caplog.at_level(logging.WARNING, logger="mkdocs.hooks.figures"):
        figures.draw_all(docs, root)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    rerun = "rerun `python docs/hooks/evaluate_runs.py`"
    assert f"figures: calibration: evaluate_paper.json was edited after its run; {rerun}" in warned
    assert f"figures: calibration: its input {MATRIX} changed since the run; {rerun}" in warned
    assert f"figures: future: its input {MATRIX} changed since the run; {rerun}" in warned


def test_missing_results_and_unknown_figures_are_warnings(figures, tmp_path, caplog) -> None:
    root, docs = copy_of_repo(tmp_path)
    (docs / "assets" / "data" / "probes_future.json").unlink()
    with caplog.at_level(logging.WARNING, logger="mkdocs.hooks.figures"):
        drawn = figures.draw_all(docs, root)
        figures._drawn.clear()
        figures._drawn.update(drawn)
        out = figures.on_page_markdown(
            "<!-- figure: probes -->\n<!-- figure: nosuch -->", page(), None, None
        )
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "figures: probes: probes_future.json is missing; rerun" in warned[0]
    assert "figures: method.md names no figure 'nosuch'" in warned
    assert "The results of the probes figure are missing." in out
