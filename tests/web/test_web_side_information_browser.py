"""The Predict tab's model name and release date, in headless Chromium: they reach the
fold-in and the page says which family and date the prediction used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from predictor import BenchPress
from predictor.paths import bundled_snapshot_dir
from tests.web.conftest import BUNDLED_VERSION, RunningApp, open_page, wait

pytestmark = pytest.mark.browser

PROBES = {"gpqa_diamond": 80, "hle": 20, "mmlu_pro": 80}


def swe_score(browser: Any) -> str:
    rows = browser.find_elements("css selector", "#prediction-table tbody tr")
    for row in rows:
        if row.get_attribute("data-benchmark") == "swe_bench_verified" or (
            "swe_bench_verified" in row.text or "SWE-bench Verified" in row.text
        ):
            return row.text
    return ""


def test_a_model_name_and_date_reach_the_prediction(
    app: RunningApp, browser: Any, artifacts: Path
) -> None:
    bp = BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())
    named = bp.predict(PROBES, model="claude-opus-4.5-preview", release_date="2025-11-24")
    open_page(browser, app.url + "/?scores=gpqa_diamond=80,hle=20,mmlu_pro=80")
    side = browser.find_element("id", "predict-side")
    wait(browser, lambda d: side.text.startswith("Family: none"), "the default side line")
    assert side.text == (
        "Family: none (no model name given), so the whole population · release date "
        "2026-07-01 (newest in the fit)"
    )
    before = swe_score(browser)
    browser.find_element("css selector", "details.side-info summary").click()
    name = browser.find_element("id", "side-model")
    name.send_keys("claude-opus-4.5-preview")
    browser.execute_script(
        "const d = document.getElementById('side-date'); d.value = '2025-11-24';"
        "d.dispatchEvent(new Event('change'))"
    )
    name.send_keys("\t")  # the name's change event
    wait(browser, lambda d: "claude4.5" in side.text, "the family from the name")
    assert side.text == "Family: claude4.5 · release date 2025-11-24 (given)"
    wait(browser, lambda d: swe_score(browser) != before, "the prediction moved")
    assert f"{named['swe_bench_verified'].score:.1f}" in swe_score(browser)
    browser.save_screenshot(str(artifacts / "side_information.png"))
