"""Issue 16, the web page's first-hour defects, in headless Chromium: the Fit tab's parameters
and predicted-vs-actual panel, the fraction-scores warning, the Probes tab's hint, compare
labels at 1280x800 and the heatmap's naming and suspicious cells. Screenshots go to
test-artifacts/web/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from predictor import BenchPress
from predictor.util.paths import bundled_snapshot_dir
from tests.web.conftest import BUNDLED_VERSION, RunningApp, open_page, wait

pytestmark = pytest.mark.browser

MISSING = re.compile(r"\b(undefined|NaN|null)\b")


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())


def page_text(driver: Any) -> str:
    return driver.execute_script("return document.body.innerText")


def test_fit_tab_shows_the_methods_parameters_and_the_held_out_scatter(
    app: RunningApp, browser: Any, bp: BenchPress, artifacts: Path
) -> None:
    open_page(browser, app.url + "/?view=fit")
    wait(browser, lambda d: d.find_elements("css selector", "#holdout-chart circle"), "holdout")
    manifest = browser.find_element("id", "manifest").text
    assert "Method\nrobust Bayesian matrix factorisation" in manifest
    assert (
        "Fit\nrank 4, chains 8, burn-in sweeps per chain 20, samples per chain 20, draws kept "
        "40, Student-t degrees of freedom 3, percent link learned per benchmark, shrunk to "
        "the plain logit by n / (n + 30), min. scores per model 15, min. scores per "
        "benchmark 8, random seed 0"
    ) in manifest
    assert "λ" not in manifest and "iterations" not in manifest
    dots = browser.find_elements("css selector", "#holdout-chart circle")
    cells = bp.manifest["quality"]["holdout_cells"]
    assert len(dots) == cells
    text = browser.find_element("id", "holdout-chart").text
    assert f"{cells} held-out cells" in text and "leave-one-out" in text
    assert "no held-out" not in text
    assert not MISSING.search(page_text(browser)), MISSING.search(page_text(browser))
    browser.execute_script("document.getElementById('holdout-chart').scrollIntoView()")
    browser.save_screenshot(str(artifacts / "first_hour_fit.png"))


@pytest.mark.parametrize(
    "path",
    [
        "/?model=gpt-5.2",
        "/?scores=gpqa_diamond=80,hle=20",
        "/?view=probes",
        "/?view=compare&models=gpt-5.2,claude-opus-4.5",
        "/?view=matrix&cell=gpt-5.2,gpqa_diamond",
        "/?view=runs",
    ],
)
def test_no_view_prints_a_missing_value(app: RunningApp, browser: Any, path: str) -> None:
    open_page(browser, app.url + path)
    if "compare" in path:
        wait(browser, lambda d: d.find_elements("css selector", "#compare-table tbody tr"), "rows")
    if "cell=" in path:
        wait(browser, lambda d: d.find_elements("css selector", "#cell-card a.prov-link"), "cell")
    if "model=" in path or "scores=" in path:
        wait(browser, lambda d: d.find_elements("css selector", "#prediction-table tbody tr"))
    found = MISSING.search(page_text(browser))
    assert not found, page_text(browser)[max(0, found.start() - 200) : found.end() + 50]


def test_fraction_scores_warn_on_the_page(app: RunningApp, browser: Any, artifacts: Path) -> None:
    open_page(browser, app.url + "/?scores=gpqa_diamond=0.8")
    warning = browser.find_element("id", "predict-warning")
    wait(browser, lambda d: warning.is_displayed(), "fraction warning")
    assert warning.text == (
        "every percent score given is at most 1 (gpqa_diamond=0.8): read as fractions and "
        "converted to percent (gpqa_diamond=80); give percentages (0-100) to silence this"
    )
    browser.save_screenshot(str(artifacts / "first_hour_fraction_warning.png"))
    score = browser.find_element("css selector", "#probe-rows .probe-score")
    score.clear()
    score.send_keys("80")
    browser.find_element("id", "predict-button").click()
    wait(browser, lambda d: not warning.is_displayed(), "warning gone for a percent score")


def test_probes_tab_opens_with_a_hint(app: RunningApp, browser: Any) -> None:
    open_page(browser, app.url + "/?view=probes")
    summary = browser.find_element("id", "picker-summary")
    wait(browser, lambda d: summary.text, "a hint in the result panel")
    assert summary.text.startswith("Pick k and a budget")
    assert "“Pick probes”" in summary.text


@pytest.fixture
def small_window(browser: Any) -> Iterator[Any]:
    size = browser.get_window_size()
    browser.set_window_size(1280, 800)
    try:
        yield browser
    finally:
        browser.set_window_size(size["width"], size["height"])


def test_compare_labels_are_whole_at_1280x800(
    app: RunningApp, small_window: Any, bp: BenchPress, artifacts: Path
) -> None:
    browser = small_window
    long_names = "open_llm_bbh,open_llm_gpqa,open_llm_ifeval,open_llm_math_lvl5,open_llm_musr"
    others = "gpqa_diamond,hle,mmlu_pro,arc_agi_1,humaneval,swe_bench_verified_bash_only"
    open_page(
        browser,
        app.url + "/?view=compare&models=gpt-5.2,claude-opus-4.5,gemini-3-pro"
        f"&benchmarks={long_names},{others}",
    )
    wait(browser, lambda d: d.find_elements("css selector", "#compare-chart text.row-label"))
    labels = browser.execute_script(
        """
        const body = document.querySelector('#compare-chart svg.chart-body');
        const box = body.getBoundingClientRect();
        return [...body.querySelectorAll('text.row-label')].map((t) => {
          const r = t.getBoundingClientRect();
          const rows = t.closest('g.row').querySelector('rect.row-bg').getBoundingClientRect();
          const spans = [...t.querySelectorAll('tspan')];
          const text = spans.length ? spans.map((s) => s.textContent).join(' ') : t.textContent;
          return {text, lines: spans.length,
                  left: r.left - box.left, top: r.top - rows.top, bottom: rows.bottom - r.bottom,
                  key: t.closest('g.row').dataset.key};
        });
        """
    )
    names = dict(bp.snapshot.benchmarks.select("benchmark_id", "name").iter_rows())
    assert len(labels) >= 10
    for label in labels:
        # the whole name, no "…", inside the chart and inside its own row
        assert label["text"] == " ".join(names[label["key"]].split())
        assert "…" not in label["text"]
        assert label["left"] >= 0 and label["top"] >= 0 and label["bottom"] >= 0, label
    assert any(label["lines"] == 2 for label in labels)  # the long names wrap
    browser.execute_script("document.getElementById('compare-chart').scrollIntoView()")
    browser.save_screenshot(str(artifacts / "first_hour_compare_1280x800.png"))


def _cell_pixel(driver: Any, model: str, benchmark: str) -> list[int]:
    """RGBA of the canvas pixel in the gap right of the cell (white unless outlined)."""
    return driver.execute_script(
        """
        const canvas = document.querySelector('canvas.heatmap');
        const c = canvas.heatmap.cellCentre(arguments[0], arguments[1]);
        const dpr = window.devicePixelRatio || 1;
        const ctx = canvas.getContext('2d');
        return [...ctx.getImageData(Math.floor((c.x + 5.5) * dpr), Math.floor(c.y * dpr), 1, 1)
          .data];
        """,
        model,
        benchmark,
    )


def test_heatmap_names_by_id_and_outlines_suspicious_cells(
    app: RunningApp, browser: Any, bp: BenchPress, artifacts: Path
) -> None:
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    open_page(browser, app.url + "/?view=matrix")
    wait(browser, lambda d: d.execute_script("return document.querySelector('canvas.heatmap')"))
    wait(
        browser,
        lambda d: d.execute_script("return document.querySelector('canvas.heatmap').heatmap.drawn"),
        "heatmap drawn",
    )
    drawn = browser.execute_script("return document.querySelector('canvas.heatmap').heatmap.drawn")
    assert sorted(drawn["rows"]) == sorted(bp.fit_models_)  # whole ids (round 3)
    assert sorted(drawn["cols"]) == sorted(bp.fit_benchmarks_)
    assert "Claude 3 Haiku" not in drawn["rows"] and "claude-3-haiku" in drawn["rows"]

    residual = bp.suspicious_scores().filter(pl.col("reason") == "residual")
    flagged = residual.row(0, named=True)  # gpt-5.5@medium on livebench_olympiad
    red = _cell_pixel(browser, flagged["model_id"], flagged["benchmark_id"])
    assert red[0] > 180 and red[1] < 120 and red[2] < 120, red
    plain = _cell_pixel(browser, "gpt-5.2", "gpqa_diamond")
    assert plain[:3] == [255, 255, 255], plain
    legend = browser.find_element("id", "matrix-legend").text
    assert f"outlined: {bp.suspicious_scores().height} cells" in legend

    # a real pointer over the flagged cell: its tooltip names it and gives the z-score
    point = browser.execute_script(
        """
        const canvas = document.querySelector('canvas.heatmap');
        const c = canvas.heatmap.cellCentre(arguments[0], arguments[1]);
        const scroller = canvas.parentElement;
        scroller.scrollLeft = Math.max(0, c.x - 300);
        scroller.scrollTop = Math.max(0, c.y - 200);
        const before = canvas.getBoundingClientRect();
        window.scrollBy(0, before.top + c.y - window.innerHeight / 2);
        const r = canvas.getBoundingClientRect();
        return [Math.round(r.left + c.x), Math.round(r.top + c.y)];
        """,
        flagged["model_id"],
        flagged["benchmark_id"],
    )
    actions = ActionBuilder(browser)
    actions.pointer_action.move_to_location(point[0], point[1])
    actions.perform()
    tooltip = browser.find_element("css selector", "#matrix .tooltip")
    wait(browser, lambda d: tooltip.is_displayed(), "tooltip")
    matrix = app.get("/api/matrix").json()
    i = matrix["models"].index(flagged["model_id"])
    j = matrix["benchmarks"].index(flagged["benchmark_id"])
    assert tooltip.text.splitlines() == [
        f"{matrix['model_names'][i]} ({flagged['model_id']})",  # GPT-5.5 (medium) (gpt-5.5@...)
        f"{matrix['benchmark_names'][j]} ({flagged['benchmark_id']})",
        "observed 0.0",
        f"fit {matrix['predicted'][i][j]:.1f}",
        f"suspicious: z = {flagged['z']:.1f} (leave-one-out prediction {flagged['predicted']:.1f})",
    ]
    browser.save_screenshot(str(artifacts / "first_hour_heatmap_suspicious.png"))
