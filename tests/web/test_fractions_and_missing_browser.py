"""On the page, in headless Chromium: scores typed as fractions are converted to
percent and the page says so; a probe the snapshot has too few scores to use is left out, the
page says which and why, and the other probes still predict. Screenshots go to
test-artifacts/web/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import RunningApp, open_page, wait

pytestmark = pytest.mark.browser


def _score(driver: Any, benchmark: str) -> str:
    """The score cell's value (`data-value`, the number the page got) of a benchmark's row."""
    selector = f'#prediction-table tbody tr[data-benchmark="{benchmark}"] td.score'
    return driver.find_element("css selector", selector).get_attribute("data-value")


def test_fractions_are_converted_and_said_on_the_page(
    app: RunningApp, browser: Any, artifacts: Path
) -> None:
    open_page(browser, app.url + "/?scores=gpqa_diamond=0.46,mmlu_pro=0.66,hle=0.2")
    warning = browser.find_element("id", "predict-warning")
    wait(browser, lambda d: warning.is_displayed(), "fraction warning")
    assert warning.text == (
        "every percent score given is at most 1 (gpqa_diamond=0.46, hle=0.2, mmlu_pro=0.66): "
        "read as fractions and converted to percent (gpqa_diamond=46, hle=20, mmlu_pro=66); "
        "give percentages (0-100) to silence this"
    )
    assert wait(browser, lambda d: _score(d, "mmlu_pro"), "mmlu_pro row") == "66"  # percent
    browser.save_screenshot(str(artifacts / "fractions_converted.png"))


def test_an_unusable_probe_is_left_out_with_a_warning_on_the_page(
    app: RunningApp, browser: Any, artifacts: Path
) -> None:
    open_page(browser, app.url + "/?scores=gpqa_diamond=80,mmlu_pro=74,mt_bench=8.5")
    warning = browser.find_element("id", "predict-warning")
    wait(browser, lambda d: warning.is_displayed(), "left-out warning")
    assert warning.text.startswith(
        "mt_bench: too few scores in snapshot 2026.12.07.3 to be used as a probe, left out; "
        "predicting from the other 2 (gpqa_diamond, mmlu_pro)"
    )
    assert wait(browser, lambda d: _score(d, "gpqa_diamond"), "gpqa_diamond row") == "80"
    assert not browser.find_elements("css selector", 'tr[data-benchmark="mt_bench"]')
    assert browser.find_element("id", "predict-error").text == ""
    browser.save_screenshot(str(artifacts / "unusable_probe_left_out.png"))
