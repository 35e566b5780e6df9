"""The page keeps what a person asked for: a failed pick keeps its link, "Use these probes"
keeps typed scores, a link's level stays within what the API serves, and a known model's scores
read as people write them. Headless Chromium, as in test_web_browser."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import pytest

from predictor import BenchPress
from predictor.util.paths import bundled_snapshot_dir
from tests.web.conftest import BUNDLED_VERSION, RunningApp, open_page, table_rows, wait

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())


def score_value(driver: Any, benchmark: str) -> float:
    cell = driver.find_element(
        "css selector", f'#prediction-table tbody tr[data-benchmark="{benchmark}"] td.score'
    )
    return float(cell.get_attribute("data-value"))


def probe_inputs(driver: Any) -> list[tuple[str, str]]:
    rows = driver.find_elements("css selector", "#probe-rows tr")
    return [
        (
            r.find_element("css selector", ".probe-benchmark").get_attribute("value"),
            r.find_element("css selector", ".probe-score").get_attribute("value"),
        )
        for r in rows
    ]


def picked(driver: Any) -> list[str]:
    rows = driver.find_elements("css selector", "#picker-table tbody tr.picked")
    return [r.get_attribute("data-benchmark") for r in rows]


def query_of(url: str) -> str:
    return unquote(url.split("?", 1)[1]) if "?" in url else ""


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("view=probes&k=50", "k must be at most 20, got 50"),
        (
            "view=probes&k=2&targets=codng",
            "targets: unknown profile or benchmark 'codng'; profiles: coding_assistant, chat, "
            "reasoning, general_assistant; did you mean: coding_assistant, scicode, "
            "facts_grounding?",
        ),
    ],
)
def test_a_failed_pick_keeps_its_settings_in_the_link(
    app: RunningApp, browser: Any, query: str, message: str
) -> None:
    open_page(browser, f"{app.url}/?{query}")
    error = browser.find_element("id", "picker-error")
    wait(browser, lambda d: error.is_displayed(), "error shown")
    assert error.text == message
    kept = query_of(browser.current_url).split("&")
    assert all(part in kept for part in query.split("&")), kept  # (and the default targets)
    share = browser.find_element("id", "picker-share")
    assert share.get_attribute("href") == browser.current_url
    assert share.text == browser.current_url


def test_use_these_probes_keeps_the_scores_already_typed(
    app: RunningApp, browser: Any, bp: BenchPress
) -> None:
    from selenium.webdriver.support.ui import Select

    open_page(browser, app.url + "/?scores=GPQA%20Diamond=80,hle=20")
    given = bp.predict({"gpqa_diamond": 80, "hle": 20})
    wait(browser, lambda d: len(table_rows(d)) == len(given), "prediction table")

    browser.find_element("id", "goto-picker").click()
    targets = browser.find_element("id", "picker-targets")
    wait(browser, lambda d: len(Select(targets).options) == 6, "profiles loaded")
    Select(targets).select_by_value("coding_assistant")
    k = browser.find_element("id", "picker-k")
    k.clear()
    k.send_keys("3")
    browser.find_element("id", "picker-run").click()
    chosen = bp.select_probes(k=3, targets="coding_assistant").benchmarks
    assert "gpqa_diamond" in chosen  # already in the form, as "GPQA Diamond"
    wait(browser, lambda d: picked(d) == chosen, "picked")

    browser.find_element("id", "picker-use").click()
    wait(browser, lambda d: d.find_element("id", "view-predict").is_displayed(), "predict view")
    added = [(b, "") for b in chosen if b != "gpqa_diamond"]
    assert probe_inputs(browser) == [("GPQA Diamond", "80"), ("hle", "20"), *added]
    wait(
        browser,
        lambda d: score_value(d, "aime_2025") == given["aime_2025"].score,
        "prediction from the typed scores",
    )
    summary = browser.find_element("id", "predict-summary").text
    assert f"{len(added)} benchmarks without a score yet" in summary
    assert not browser.find_element("id", "predict-error").is_displayed()
    wait(browser, lambda d: "scores=gpqa_diamond=80,hle=20," in d.current_url, "URL")


@pytest.mark.parametrize("level", ["0.9999999999999999", "0.001", "1"])
def test_a_link_level_outside_the_served_range_falls_back(
    app: RunningApp, browser: Any, bp: BenchPress, level: str
) -> None:
    open_page(browser, f"{app.url}/?scores=gpqa_diamond=80&level={level}")
    expected = bp.predict({"gpqa_diamond": 80}, level=0.9)
    wait(browser, lambda d: len(table_rows(d)) == len(expected), "prediction table")
    assert browser.find_element("id", "level").get_attribute("value") == "0.9"
    assert "90% intervals" in browser.find_element("id", "predict-summary").text
    assert not browser.find_element("id", "predict-error").is_displayed()
    assert "level=" not in browser.current_url


def test_a_known_models_scores_have_no_float_tails(
    app: RunningApp, browser: Any, bp: BenchPress
) -> None:
    own = bp.scores().filter(bp.scores()["model_id"] == "gpt-5.2")
    observed = dict(own.select("benchmark_id", "score").iter_rows())
    assert repr(observed["arc_agi_2_public"]) == "59.809999999999995"  # what the data holds

    open_page(browser, app.url + "/?model=gpt-5.2")
    wait(browser, lambda d: len(table_rows(d)) == len(bp.fit_benchmarks_), "prediction table")
    shown = dict(probe_inputs(browser))
    assert shown["arc_agi_2_public"] == "59.81" and shown["epoch_eci"] == "152.4183"
    assert all(len(value.partition(".")[2]) <= 4 for value in shown.values())
    # the prediction is still the one from the model's own scores, not the rounded ones
    expected = bp.predict({b: observed[b] for b in shown}, model="gpt-5.2")
    assert score_value(browser, "hle") == expected["hle"].score
    wait(browser, lambda d: "arc_agi_2_public=59.81" in d.current_url, "URL")
    link = browser.current_url
    assert "59.8099" not in link and "152.41828" not in link and "model=gpt-5.2" in link
    share = browser.find_element("id", "share-link")
    assert share.get_attribute("href") == link

    open_page(browser, link)  # the shared link: same rows, same prediction
    wait(browser, lambda d: len(table_rows(d)) == len(bp.fit_benchmarks_), "prediction table")
    assert dict(probe_inputs(browser)) == shown
    assert score_value(browser, "hle") == expected["hle"].score
