"""Everyday use, round 3, in headless Chromium: the New benchmark tab's empty box, the Compare
tab's default benchmarks, each benchmark once on the Runs tab, and labels shown whole (Predict
chart, Matrix, Fit plane), measured in the browser. Screenshots go to test-artifacts/web/."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from predictor import BenchPress
from predictor.util.paths import bundled_snapshot_dir
from tests.web.conftest import BUNDLED_VERSION, RUN, RUN_STEPS, RunningApp, open_page, wait

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())


@pytest.fixture(scope="module")
def names(bp: BenchPress) -> dict[str, str]:
    return dict(bp.snapshot.benchmarks.select("benchmark_id", "name").iter_rows())


def squeeze(text: str) -> str:
    """A label's text without the spaces and line breaks wrapping puts in or takes out."""
    return re.sub(r"\s+", "", text)


# ------------------------------------------------------------------------- new benchmark
def test_new_benchmark_box_is_empty_and_predicting_from_nothing_says_so(
    app: RunningApp, browser: Any, artifacts: Path
) -> None:
    open_page(browser, app.url + "/?view=new-benchmark")
    box = browser.find_element("id", "nb-scores")
    wait(browser, lambda d: box.is_displayed(), "the scores box")
    assert box.get_attribute("value") == ""
    # the placeholder reads as an instruction, not as scores already filled in
    placeholder = box.get_attribute("placeholder")
    assert not re.search(r"=\s*\d", placeholder), placeholder
    style = browser.execute_script(
        "const s = getComputedStyle(arguments[0], '::placeholder');return [s.fontStyle, s.color];",
        box,
    )
    assert style[0] == "italic", style

    browser.find_element("id", "nb-run").click()
    error = browser.find_element("id", "nb-error")
    wait(browser, lambda d: error.is_displayed(), "a message for an empty box")
    assert "at least 3 models" in error.text and "model=score" in error.text
    assert browser.switch_to.active_element == box
    assert not browser.find_element("id", "nb-results").is_displayed()
    browser.save_screenshot(str(artifacts / "round3_new_benchmark_empty.png"))


# ------------------------------------------------------------------------------- compare
def test_compare_defaults_to_benchmarks_the_models_were_measured_on(
    app: RunningApp, browser: Any, artifacts: Path
) -> None:
    open_page(browser, app.url + "/?view=compare")
    rows = "#compare-table tbody tr"
    wait(browser, lambda d: len(d.find_elements("css selector", rows)) >= 12, "compare rows")
    shown = browser.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((tr) => "
        "[tr.dataset.benchmark, tr.querySelectorAll('td.observed').length])",
        rows,
    )
    assert len(shown) == 12
    unmeasured = [b for b, observed in shown if observed == 0]
    assert not unmeasured, f"no default model was measured on {unmeasured}"
    assert f"benchmarks={'%2C'.join(b for b, _ in shown)}" in browser.current_url.replace(
        ",", "%2C"
    )
    browser.save_screenshot(str(artifacts / "round3_compare_default.png"))

    # "Most reported" brings the same default back after an edit
    browser.find_element("css selector", "#compare-benchmarks .chip button").click()
    wait(browser, lambda d: len(d.find_elements("css selector", rows)) == 11, "one removed")
    browser.find_element("id", "compare-benchmark-reset").click()
    wait(browser, lambda d: len(d.find_elements("css selector", rows)) == 12, "reset")
    again = [r.get_attribute("data-benchmark") for r in browser.find_elements("css selector", rows)]
    assert again == [b for b, _ in shown]


# ---------------------------------------------------------------------------------- runs
def test_runs_show_each_benchmark_once_and_say_predicted_only_where_predicted(
    team_app: RunningApp, browser: Any, names: dict[str, str], artifacts: Path
) -> None:
    open_page(browser, team_app.url + f"/?view=runs&run={RUN}")
    rows = "#run-table tbody tr"
    wait(browser, lambda d: len(d.find_elements("css selector", rows)) == len(RUN_STEPS), "rows")
    heads = browser.execute_script(
        "return [...document.querySelectorAll('#run-table thead th')].slice(3)"
        ".map((th) => [th.children[1].textContent, th.children[2].textContent])"
    )
    columns = [name for name, _ in heads]
    assert len(columns) == len(set(columns)), heads
    assert [kind for name, kind in heads if name == names["gpqa_diamond"]] == ["probe"]
    # the table's cells: an "obs" badge never fills a whole "predicted" column
    badges = browser.execute_script(
        """
        const table = document.getElementById('run-table');
        const n = table.tHead.rows[0].cells.length;
        return [...Array(n).keys()].slice(3).map((i) => [...table.tBodies[0].rows]
          .every((tr) => tr.cells[i].querySelector('.tag')));
        """
    )
    assert not any(badges), heads

    chart = browser.find_element("css selector", "#run-chart svg.trajectory")
    keys = [g.get_attribute("data-key") for g in chart.find_elements("css selector", "g.series")]
    assert "target:gpqa_diamond" not in keys and "probe:gpqa_diamond" in keys
    assert len({k.split(":", 1)[1] for k in keys}) == len(keys), keys
    legend = browser.find_element("id", "run-legend").text.splitlines()
    gpqa = [line for line in legend if line.startswith(names["gpqa_diamond"] + " (")]
    assert gpqa == [f"{names['gpqa_diamond']} (probe)"], legend
    # every line the legend calls predicted has a predicted (not observed) point
    for line in chart.find_elements("css selector", "g.series.target"):
        assert line.find_elements("css selector", "circle.point"), line.get_attribute("data-key")
    mmlu = [line for line in legend if line.startswith(names["mmlu_pro"] + " (")]
    assert mmlu == [f"{names['mmlu_pro']} (probe where run, else predicted with 90% band)"]
    browser.save_screenshot(str(artifacts / "round3_runs.png"))


# -------------------------------------------------------------------------------- labels
LABEL_BOXES = """
const chart = document.querySelector(arguments[0]);
const box = chart.querySelector('svg.chart-body').getBoundingClientRect();
return [...chart.querySelectorAll('text.row-label')].map((t) => {
  const r = t.getBoundingClientRect();
  const row = t.closest('g.row').querySelector('rect.row-bg').getBoundingClientRect();
  const first = chart.querySelector('.interval, .point');
  return {key: t.closest('g.row').dataset.key, text: t.textContent,
          lines: Math.max(1, t.querySelectorAll('tspan').length),
          left: r.left - box.left, right: r.right, top: r.top - row.top,
          bottom: row.bottom - r.bottom,
          axis: first ? Math.min(...[...chart.querySelectorAll('line.grid')]
            .map((g) => g.getBoundingClientRect().left)) : Infinity};
});
"""


def test_predict_chart_labels_are_whole(
    app: RunningApp, browser: Any, names: dict[str, str], artifacts: Path
) -> None:
    open_page(browser, app.url + "/?model=gpt-5.2")
    wait(browser, lambda d: d.find_elements("css selector", "#predict-chart text.row-label"))
    labels = browser.execute_script(LABEL_BOXES, "#predict-chart")
    assert any(label["key"] == "mbpp_plus" or "MBPP" in label["text"] for label in labels)
    for label in labels:
        assert "…" not in label["text"], label
        assert squeeze(label["text"]) == squeeze(names.get(label["key"], label["key"])), label
        # inside the chart, inside its own row, left of the plot area
        assert label["left"] >= 0 and label["top"] >= 0 and label["bottom"] >= 0, label
        assert label["right"] <= label["axis"] + 1, label
    assert any(label["lines"] > 1 for label in labels)
    browser.save_screenshot(str(artifacts / "round3_predict_labels.png"))


def test_matrix_labels_are_whole_and_the_last_column_fits(
    app: RunningApp, browser: Any, bp: BenchPress, artifacts: Path
) -> None:
    open_page(browser, app.url + "/?view=matrix")
    script = "return document.querySelector('canvas.heatmap')?.heatmap?.drawn"
    wait(browser, lambda d: d.execute_script(script), "heatmap drawn")
    facts = browser.execute_script(
        """
        const canvas = document.querySelector('canvas.heatmap');
        const map = canvas.heatmap;
        const ctx = canvas.getContext('2d');
        ctx.font = "10.5px system-ui, -apple-system, 'Segoe UI', sans-serif";
        const wide = (labels) => Math.max(...labels.map((t) => ctx.measureText(t).width));
        const scroller = canvas.parentElement;
        scroller.scrollLeft = scroller.scrollWidth;
        const view = scroller.getBoundingClientRect();
        const c = canvas.getBoundingClientRect();
        const last = map.cols.length - 1;
        const cellRight = c.left + map.labelW + (last + 1) * 12;
        return {drawn: map.drawn, rowRoom: map.labelW, colRoom: map.top,
                rowWidest: wide(map.drawn.rows), colWidest: wide(map.drawn.cols),
                cellRight, viewRight: view.left + scroller.clientWidth,
                canvasWidth: c.width, scrollWidth: scroller.scrollWidth};
        """
    )
    assert sorted(facts["drawn"]["rows"]) == sorted(bp.fit_models_)
    assert sorted(facts["drawn"]["cols"]) == sorted(bp.fit_benchmarks_)
    assert "claude-sonnet-4.6@thinking-auto" in " ".join(facts["drawn"]["rows"])
    assert facts["rowWidest"] + 6 <= facts["rowRoom"], facts["rowWidest"]
    assert facts["colWidest"] + 6 <= facts["colRoom"], facts["colWidest"]
    # scrolled to the end, the last column is inside the visible part, whole
    assert facts["cellRight"] <= facts["viewRight"], facts
    assert facts["scrollWidth"] >= facts["canvasWidth"]
    browser.save_screenshot(str(artifacts / "round3_matrix_labels.png"))


def test_fit_plane_labels_are_whole_names_inside_the_plot(
    app: RunningApp, browser: Any, names: dict[str, str], artifacts: Path
) -> None:
    open_page(browser, app.url + "/?view=fit")
    wait(browser, lambda d: d.find_elements("css selector", "#loadings-chart text.point-label"))
    labels = browser.execute_script(
        """
        const svg = document.querySelector('#loadings-chart svg');
        const box = svg.getBoundingClientRect();
        return [...svg.querySelectorAll('text.point-label')].map((t) => {
          const r = t.getBoundingClientRect();
          return {text: t.textContent, left: r.left - box.left, right: box.right - r.right};
        });
        """
    )
    whole = set(names.values())
    assert labels
    for label in labels:
        assert "…" not in label["text"] and label["text"] in whole, label
        assert label["left"] >= 0 and label["right"] >= 0, label
    assert any(len(label["text"]) >= 20 for label in labels), labels  # long names, whole
    browser.execute_script("document.getElementById('loadings-chart').scrollIntoView()")
    browser.save_screenshot(str(artifacts / "round3_fit_plane.png"))
