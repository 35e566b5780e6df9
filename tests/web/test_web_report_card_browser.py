"""The Predict tab's report card in headless Chromium: the probes pinned first and marked as
measured, the predictions grouped by category under headed, foldable groups, each interval as
low–high, one list by score on request; the empty card's example; a refused release date
says what to fix, and the date picker shows the allowed range. Screenshots go to
test-artifacts/web/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from predictor import BenchPress
from predictor.util.paths import bundled_snapshot_dir
from tests.web.conftest import BUNDLED_VERSION, RunningApp, open_page, table_rows, wait

pytestmark = pytest.mark.browser

PROBES = {"gpqa_diamond": 65.0, "mmlu_pro": 78.0, "ifeval": 86.0}  # the page's example too
LINK = "/?scores=" + ",".join(f"{b}={v:g}" for b, v in PROBES.items())


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())


@pytest.fixture(scope="module")
def categories(bp: BenchPress) -> dict[str, str]:
    rows = bp.snapshot.benchmarks.select("benchmark_id", "category").iter_rows()
    return {b: c or "other" for b, c in rows}


def groups(driver: Any) -> list[dict[str, Any]]:
    """Each tbody of the table: its group, head text and rows' benchmarks."""
    return driver.execute_script(
        """return [...document.querySelectorAll('#prediction-table tbody')].map((body) => ({
          group: body.dataset.group || null,
          head: body.querySelector('tr.group-head')?.textContent || null,
          rows: [...body.querySelectorAll('tr[data-benchmark]')].map((tr) => tr.dataset.benchmark),
        }))"""
    )


def test_report_card_pins_the_probes_then_groups_by_category_with_low_high_intervals(
    app: RunningApp, browser: Any, bp: BenchPress, categories: dict[str, str], artifacts: Path
) -> None:
    expected = bp.predict(PROBES)
    open_page(browser, app.url + LINK)
    wait(browser, lambda d: len(table_rows(d)) == len(expected), "prediction table")
    shown = groups(browser)

    # the probes first, marked as measured
    assert shown[0]["group"] == "probes"
    assert shown[0]["head"].startswith("▾Your probes (measured)3 benchmarks")
    assert sorted(shown[0]["rows"]) == sorted(PROBES)
    kinds = [
        browser.find_element("css selector", f'tr[data-benchmark="{b}"] .chip').text for b in PROBES
    ]
    assert kinds == ["measured (probe)"] * 3

    # then one group per category, every prediction in its own category's, the largest first
    predicted = [b for b in expected if b not in PROBES]
    by_group = {g["group"]: g["rows"] for g in shown[1:]}
    assert sorted(b for rows in by_group.values() for b in rows) == sorted(predicted)
    for group, rows in by_group.items():
        assert {categories[b] for b in rows} == {group}, group
    sizes = [len(g["rows"]) for g in shown[1:] if g["group"] != "other"]
    assert sizes == sorted(sizes, reverse=True)
    coding = next(g for g in shown if g["group"] == "coding")
    assert coding["head"].startswith(f"▾Coding{len(coding['rows'])} benchmarks · median predicted")

    # each interval as its two ends (asymmetric), never as ± a half-width
    for benchmark in ("mmlu", "humaneval", "hle"):
        p = expected[benchmark]
        cell = browser.find_element("css selector", f'tr[data-benchmark="{benchmark}"] td.interval')
        assert cell.text == f"{p.low:.1f}–{p.high:.1f}"
    heads = [th.text for th in browser.find_elements("css selector", "#prediction-table thead th")]
    assert "Interval (low–high)" in heads and "±" not in heads

    # the chart: the probes' heading and rows first, then a heading per category
    headings = browser.execute_script(
        "return [...document.querySelectorAll('#predict-chart g.heading')]"
        ".map((g) => [g.dataset.key, g.textContent])"
    )
    assert headings[0][0] == "probes" and headings[0][1].startswith("Your probes (measured)")
    assert "coding" in [key for key, _ in headings]
    first_rows = browser.execute_script(
        "return [...document.querySelectorAll('#predict-chart g.row')].slice(0, 3)"
        ".map((g) => g.dataset.key)"
    )
    assert sorted(first_rows) == sorted(PROBES)
    browser.save_screenshot(str(artifacts / "report_card.png"))

    # a group folds away (its rows hidden, in the chart too) and opens again
    toggle = browser.find_element("css selector", 'button.group-toggle[data-group="coding"]')
    toggle.click()
    wait(
        browser,
        lambda d: (
            d.find_element(
                "css selector", 'button.group-toggle[data-group="coding"]'
            ).get_attribute("aria-expanded")
            == "false"
        ),
        "coding folded",
    )
    visible = browser.execute_script(
        "return [...document.querySelectorAll('tbody[data-group=\"coding\"] tr[data-benchmark]')]"
        ".filter((tr) => !tr.hidden).length"
    )
    assert visible == 0
    chart_keys = browser.execute_script(
        "return [...document.querySelectorAll('#predict-chart g.row')].map((g) => g.dataset.key)"
    )
    assert not set(chart_keys) & set(coding["rows"])
    browser.find_element("css selector", 'button.group-toggle[data-group="coding"]').click()
    wait(
        browser,
        lambda d: (
            d.find_element(
                "css selector", 'button.group-toggle[data-group="coding"]'
            ).get_attribute("aria-expanded")
            == "true"
        ),
        "coding open",
    )

    # sorting by score stays: one list, the highest first (open scales after percent ones)
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("id", "table-order")).select_by_value("score")
    wait(browser, lambda d: len(groups(d)) == 1, "one list")
    order = groups(browser)[0]["rows"]
    percent = [b for b in order if bp._scale[b] == "percent"]
    scores = [expected[b].score for b in percent]
    assert scores == sorted(scores, reverse=True)
    assert order[: len(percent)] == percent
    Select(browser.find_element("id", "table-order")).select_by_value("category")
    wait(browser, lambda d: groups(d)[0]["group"] == "probes", "grouped again")


def test_the_empty_card_offers_an_example_that_fills_the_form(
    app: RunningApp, browser: Any, bp: BenchPress, artifacts: Path
) -> None:
    open_page(browser, app.url + "/")
    empty = browser.find_element("id", "predict-empty")
    assert empty.is_displayed()
    assert "No prediction yet." in empty.text
    browser.save_screenshot(str(artifacts / "report_card_empty.png"))
    browser.find_element("id", "predict-example").click()
    expected = bp.predict(PROBES)
    wait(browser, lambda d: len(table_rows(d)) == len(expected), "the example's prediction")
    inputs = [
        i.get_attribute("value") for i in browser.find_elements("css selector", "#probe-rows input")
    ]
    assert inputs == ["gpqa_diamond", "65", "mmlu_pro", "78", "ifeval", "86"]
    assert not browser.find_element("id", "predict-empty").is_displayed()
    score = browser.find_element("css selector", 'tr[data-benchmark="hle"] td.score').text
    assert score == f"{expected['hle'].score:.1f}"


def test_a_refused_release_date_says_what_to_fix_and_the_picker_shows_the_range(
    app: RunningApp, browser: Any, bp: BenchPress
) -> None:
    earliest, newest = bp.release_date_range
    open_page(browser, app.url + LINK + "&release_date=1990-01-01")
    summary = browser.find_element("id", "predict-summary")
    wait(browser, lambda d: summary.text.startswith("Fix "), "the refusal")
    assert summary.text == (
        "Fix the release date (the Released chip under “Model name, family and release "
        "date”) to update the prediction."
    )
    error = browser.find_element("id", "predict-error").text
    assert error.startswith("release_date '1990-01-01' is outside") and earliest in error

    date = browser.find_element("id", "side-date")
    assert (date.get_attribute("min"), date.get_attribute("max")) == (earliest, newest)
    assert browser.find_element("id", "side-date-range").text == f"allowed {earliest} to {newest}"
