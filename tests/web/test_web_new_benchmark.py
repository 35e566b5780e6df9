"""The New benchmark tab and `/api/new-benchmark`: a team's own benchmark scores of a few known
models in, every model predicted, with similar benchmarks and models to run next; the app on
the bundled snapshot over loopback, the page in headless Chromium (screenshots go to
test-artifacts/web/)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from predictor import BenchPress
from predictor.util.paths import bundled_snapshot_dir
from tests.web.conftest import BUNDLED_VERSION, RunningApp, open_page, wait

KNOWN = (
    "gpt-4o=46,claude-sonnet-4=75.4,o3-high=83.3,gemini-2.5-pro=86.4,llama-3.1-70b-instruct=41.7"
)
HOSTILE_NAME = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())


def test_api_answers_every_model_with_similar_benchmarks_and_next_models(
    app: RunningApp, bp: BenchPress
) -> None:
    answer = app.post("/api/new-benchmark", {"scores": KNOWN, "name": HOSTILE_NAME})
    assert answer.status == 200, answer.body
    body = answer.json()
    scores = {m: float(v) for m, v in (p.split("=") for p in KNOWN.split(","))}
    expected = bp.predict_benchmark(scores, name=HOSTILE_NAME)
    assert body["name"] == HOSTILE_NAME and body["version"] == BUNDLED_VERSION
    assert body["warnings"] == [] and body["unit"] == "%" and body["level"] == 0.9
    assert [r["model_id"] for r in body["predictions"]] == expected.predictions[
        "model_id"
    ].to_list()
    first = expected.predictions.row(0, named=True)
    assert body["predictions"][0] == first
    assert [r["benchmark_id"] for r in body["similar"]] == expected.similar[
        "benchmark_id"
    ].to_list()
    assert [r["model_id"] for r in body["next_models"]] == expected.next_models[
        "model_id"
    ].to_list()
    assert len(body["ranking"]) == 10 and len(body["pairwise"]) == 90


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (
            {"scores": "gpt-4o=46,o3-high=83.3"},
            400,
            "a new benchmark needs the scores of at least 3 models, got 2",
        ),
        (
            {"scores": "gpt-4o=46,claude-sonet-4=70,o3-high=83.3"},
            400,
            "unknown model 'claude-sonet-4'; did you mean: claude-sonnet-4,",
        ),
        (
            {"scores": "gpt-4o=146,claude-sonnet-4=70,o3-high=83.3"},
            400,
            "score for 'gpt-4o' must lie in 0-100 (percent), got 146",
        ),
        (
            {"scores": "gpt-4o=46,claude-sonnet-4=70,o3-high=83.3", "scale": "elo"},
            400,
            "scale must be one of ('percent', 'unbounded'), got 'elo'",
        ),
        ({"scores": ""}, 400, "scores is empty: give model=score pairs of at least 3 models"),
        (
            {"scores": "gpt-4o=46,claude-sonnet-4=70,o3-high=83.3", "nmae": "x"},
            400,
            "unknown parameter 'nmae' for /api/new-benchmark",
        ),
        (
            {"scores": "gpt-4o=46,claude-sonnet-4=70,o3-high=83.3", "name": "x" * 201},
            400,
            "name is longer than 200 characters",
        ),
    ],
)
def test_api_refuses_bad_input_with_the_python_message(
    app: RunningApp, body: dict[str, str], status: int, message: str
) -> None:
    answer = app.post("/api/new-benchmark", body)
    assert answer.status == status
    assert answer.json()["error"].startswith(message)


def test_api_warns_about_fraction_scores(app: RunningApp) -> None:
    answer = app.post("/api/new-benchmark", {"scores": "gpt-4o=0.46,claude-sonnet-4=0.7,o3=0.83"})
    assert answer.status == 200
    assert answer.json()["warnings"] == [
        "every score given is at most 1 (gpt-4o=0.46, claude-sonnet-4=0.7, o3-high=0.83): "
        "percent scores are percentages (0-100), not fractions; multiply by 100 if these are "
        "fractions"
    ]


@pytest.mark.browser
def test_new_benchmark_tab_from_a_shared_link(
    app: RunningApp, browser: Any, bp: BenchPress, artifacts: Path
) -> None:
    url = f"{app.url}/?view=new-benchmark&known={KNOWN}&name={quote(HOSTILE_NAME)}"
    open_page(browser, url)
    rows = wait(browser, lambda d: d.find_elements("css selector", "#nb-table tbody tr"), "rows")
    assert len(rows) == 249
    scores = {m: float(v) for m, v in (p.split("=") for p in KNOWN.split(","))}
    expected = bp.predict_benchmark(scores, name=HOSTILE_NAME)
    top = expected.predictions.row(0, named=True)
    cells = [td.text for td in rows[0].find_elements("css selector", "td")]
    assert cells[:4] == [
        "1",
        top["model_id"],
        f"{top['predicted']:.1f}",
        f"{top['lower']:.1f} – {top['upper']:.1f}",
    ]
    assert cells[-1] == "predicted" and cells[4].endswith("%")
    known = browser.find_elements("css selector", "#nb-table tbody tr.known")
    assert sorted(r.get_attribute("data-model") for r in known) == sorted(scores)
    summary = browser.find_element("id", "nb-summary").text
    assert summary == (
        f"{HOSTILE_NAME}: 249 models of snapshot {BUNDLED_VERSION} predicted from 5 known "
        "scores (percent), 90% intervals."
    )
    assert not browser.find_elements("css selector", "#view-new-benchmark img")  # stays text
    similar = browser.find_elements("css selector", "#nb-similar tbody tr")
    assert [r.get_attribute("data-benchmark") for r in similar] == expected.similar[
        "benchmark_id"
    ].to_list()
    following = browser.find_elements("css selector", "#nb-next tbody tr")
    assert [r.get_attribute("data-model") for r in following] == expected.next_models[
        "model_id"
    ].to_list()
    assert browser.find_element("id", "nb-scores").get_attribute("value").splitlines()[0] == (
        "gpt-4o=46"
    )
    severe = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe  # no script errors, no CSP violations
    text = browser.execute_script("return document.body.innerText")
    assert not re.search(r"\b(undefined|NaN|null)\b", text)
    browser.save_screenshot(str(artifacts / "new_benchmark.png"))


@pytest.mark.browser
def test_new_benchmark_tab_typed_pairs_and_errors(app: RunningApp, browser: Any) -> None:
    open_page(browser, app.url + "/")
    browser.find_element("css selector", '#tabs button[data-view="new-benchmark"]').click()
    box = browser.find_element("id", "nb-scores")
    box.clear()
    box.send_keys("gpt-4o=46\no3-high = 83.3")
    browser.find_element("id", "nb-run").click()
    error = browser.find_element("id", "nb-error")
    wait(browser, lambda d: error.is_displayed(), "too few pairs")
    assert error.text == ("give the scores of at least 3 models (model=score, one per line); got 2")
    box.send_keys("\nclaude-sonet-4=70")
    browser.find_element("id", "nb-run").click()
    wait(browser, lambda d: "claude-sonet-4" in error.text, "server error shown")
    assert error.text.startswith("unknown model 'claude-sonet-4'; did you mean: claude-sonnet-4")
    box.send_keys(Keys_backspace(len("claude-sonet-4=70")) + "claude-sonnet-4=75.4")
    browser.find_element("id", "nb-run").click()
    wait(browser, lambda d: len(d.find_elements("css selector", "#nb-table tbody tr")) == 249)
    assert not error.is_displayed()
    assert "view=new-benchmark" in browser.current_url
    assert "known=gpt-4o=46,o3-high=83.3,claude-sonnet-4=75.4" in browser.current_url
    box.send_keys("\ngpt-4.1=66")  # typed, not yet run: kept when the tab comes back
    typed = box.get_attribute("value")
    assert typed.endswith("claude-sonnet-4=75.4\ngpt-4.1=66")
    browser.find_element("css selector", '#tabs button[data-view="predict"]').click()
    browser.find_element("css selector", '#tabs button[data-view="new-benchmark"]').click()
    assert browser.find_element("id", "nb-scores").get_attribute("value") == typed


def Keys_backspace(count: int) -> str:  # noqa: N802 (reads as a key sequence)
    from selenium.webdriver.common.keys import Keys

    return Keys.BACKSPACE * count
