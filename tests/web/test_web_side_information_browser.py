"""The Predict tab's side information in headless Chromium: a model's name fills the family,
release date and base chips from `/api/side`; an edited chip is sent as an override and × takes
it back; the line under the table is the answer's own `side.reason`; the link keeps it all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from predictor import BenchPress
from predictor.util.paths import bundled_snapshot_dir
from tests.web.conftest import BUNDLED_VERSION, RunningApp, open_page, table_rows, wait

pytestmark = pytest.mark.browser

PROBES = {"gpqa_diamond": 80.0, "hle": 20.0, "mmlu_pro": 80.0}
PAGE = "/?scores=gpqa_diamond=80,hle=20,mmlu_pro=80"
FIELDS = {"family": "side-family", "release_date": "side-date", "base": "side-base"}

# every /api/predict body the page sends from now on (fetch is the page's only client)
RECORD_PREDICTS = """
window.__predicts = [];
const send = window.fetch;
window.fetch = (url, options) => {
  if (String(url).startsWith('/api/predict')) window.__predicts.push(JSON.parse(options.body));
  return send(url, options);
};
"""


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())


def chip(browser: Any, field: str) -> dict[str, str]:
    """What a chip shows: its value, where the value comes from, and its state."""
    box = browser.find_element("id", f"side-chip-{field}")
    return {
        "value": browser.find_element("id", FIELDS[field]).get_attribute("value"),
        # (its text even while the details are closed)
        "source": browser.find_element("id", f"side-{field}-source").get_attribute("textContent"),
        "state": box.get_attribute("data-state"),
    }


def side_line(browser: Any) -> str:
    return browser.find_element("id", "predict-side").text


def score(browser: Any, benchmark: str) -> float | None:
    """The table's score of `benchmark`; None while the table is (re)built."""
    cells = browser.find_elements(
        "css selector", f'#prediction-table tbody tr[data-benchmark="{benchmark}"] td.score'
    )
    return float(cells[0].get_attribute("data-value")) if cells else None


def predicts(browser: Any) -> list[dict[str, Any]]:
    return browser.execute_script("return window.__predicts")


def type_over(field: Any, text: str) -> None:
    """Type `text` over what a field shows (its whole value selected first), as a person does."""
    from selenium.webdriver.common.keys import Keys

    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(text)


def set_date(browser: Any, value: str) -> None:
    """A date input takes keys in the browser's locale order: set it as a person's pick does."""
    browser.execute_script(
        "const d = document.getElementById('side-date'); d.value = arguments[0];"
        "d.dispatchEvent(new Event('change'))",
        value,
    )


def test_a_known_model_name_fills_the_chips_and_the_reason(
    app: RunningApp, browser: Any, bp: BenchPress, artifacts: Path
) -> None:
    bare = bp.predict(PROBES)
    open_page(browser, app.url + PAGE)
    wait(browser, lambda d: side_line(d), "the side line")
    # no name: the server's line, with the date it inferred from the scores
    assert side_line(browser) == f"Side information: {bare.side.describe()}"
    assert "inferred from the probes: " in side_line(browser)
    assert chip(browser, "family") == {
        "value": "",
        "source": "none: no name, so the whole population",
        "state": "none",
    }
    assert "undefined" not in side_line(browser) and "null" not in side_line(browser)

    browser.find_element("css selector", "details.side-info summary").click()
    date = chip(browser, "release_date")
    assert date["value"] == "" and date["source"].startswith("inferred from the scores: ")
    name = browser.find_element("id", "side-model")
    name.send_keys("gpt-4o")
    # the chips fill from /api/side as the name is typed, before any prediction
    wait(browser, lambda d: chip(d, "family")["value"] == "gpt4o", "the family chip")
    wait(browser, lambda d: chip(d, "release_date")["value"] == "2024-11-20", "the date chip")
    assert chip(browser, "family") == {"value": "gpt4o", "source": "known model", "state": "auto"}
    assert chip(browser, "release_date") == {
        "value": "2024-11-20",
        "source": "catalogue",
        "state": "auto",
    }
    assert chip(browser, "base") == {
        "value": "",
        "source": "not needed: a known model",
        "state": "none",
    }
    assert browser.find_element("id", "side-basis").text == "A model of this snapshot: gpt-4o"

    named = bp.predict(PROBES, model="gpt-4o")
    name.send_keys("\t")  # the name's change event: predict
    reason = f"Side information: {named.side.describe()}"
    wait(browser, lambda d: side_line(d) == reason, "the reason line")
    assert side_line(browser) == (
        "Side information: known model gpt-4o: family gpt4o, release date 2024-11-20 (catalogue)"
    )
    wait(browser, lambda d: len(table_rows(d)) == len(named), "prediction table")
    wait(browser, lambda d: score(d, "swe_bench_verified") == named["swe_bench_verified"].score)
    assert "model_name=gpt-4o" in browser.current_url
    browser.save_screenshot(str(artifacts / "side_information.png"))


def test_editing_the_date_chip_changes_the_request(
    app: RunningApp, browser: Any, bp: BenchPress, artifacts: Path
) -> None:
    open_page(browser, app.url + PAGE + "&model_name=gpt-4o")
    assert browser.find_element("id", "side-info").get_attribute("open") == "true"
    named = bp.predict(PROBES, model="gpt-4o")
    wait(browser, lambda d: side_line(d) == f"Side information: {named.side.describe()}")
    browser.execute_script(RECORD_PREDICTS)

    set_date(browser, "2024-05-13")
    wait(browser, lambda d: predicts(d), "a prediction asked for")
    assert predicts(browser)[-1] == {
        "scores": PROBES,
        "level": 0.9,
        "model": "gpt-4o",
        "release_date": "2024-05-13",
    }
    given = bp.predict(PROBES, model="gpt-4o", release_date="2024-05-13")
    wait(browser, lambda d: "(given)" in side_line(d), "the given date")
    assert side_line(browser) == (
        "Side information: known model gpt-4o: family gpt4o, release date 2024-05-13 (given)"
    )
    assert chip(browser, "release_date") == {
        "value": "2024-05-13",
        "source": "set here · automatic: 2024-11-20",
        "state": "given",
    }
    wait(browser, lambda d: score(d, "swe_bench_verified") == given["swe_bench_verified"].score)
    wait(browser, lambda d: "release_date=2024-05-13" in d.current_url, "the link keeps it")

    # the family chip too, typed; then the link reproduces the same request
    family = browser.find_element("id", "side-family")
    type_over(family, "qwen3\n")
    wait(browser, lambda d: predicts(d)[-1].get("family") == "qwen3", "the family sent")
    both = bp.predict(PROBES, model="gpt-4o", release_date="2024-05-13", family="qwen3")
    wait(browser, lambda d: side_line(d) == f"Side information: {both.side.describe()}")
    wait(browser, lambda d: "family=qwen3" in d.current_url, "the link keeps the family")
    link = browser.find_element("id", "share-link").get_attribute("href")
    assert link == browser.current_url
    browser.save_screenshot(str(artifacts / "side_information_edited.png"))

    open_page(browser, link)
    wait(browser, lambda d: side_line(d) == f"Side information: {both.side.describe()}")
    assert chip(browser, "family")["state"] == "given"
    assert chip(browser, "release_date")["value"] == "2024-05-13"
    wait(browser, lambda d: score(d, "swe_bench_verified") == both["swe_bench_verified"].score)

    # × takes a chip back to automatic: the request no longer carries it
    browser.execute_script(RECORD_PREDICTS)
    browser.find_element("css selector", "#side-chip-release_date .side-reset").click()
    wait(browser, lambda d: predicts(d), "a prediction asked for")
    assert predicts(browser)[-1] == {
        "scores": PROBES,
        "level": 0.9,
        "model": "gpt-4o",
        "family": "qwen3",
    }
    wait(browser, lambda d: chip(d, "release_date")["value"] == "2024-11-20", "automatic again")
    assert chip(browser, "release_date")["source"] == "catalogue"
    wait(browser, lambda d: "release_date=" not in d.current_url, "the link drops it")


def test_a_base_model_chip_and_a_fine_tunes_name(
    app: RunningApp, browser: Any, bp: BenchPress
) -> None:
    open_page(browser, app.url + PAGE + "&model_name=qwen3-32b-sft-v2")
    wait(browser, lambda d: chip(d, "base")["value"] == "qwen3-32b", "the base read from the name")
    assert chip(browser, "base") == {
        "value": "qwen3-32b",
        "source": "fine-tune, from the name",
        "state": "auto",
    }
    assert chip(browser, "release_date") == {
        "value": "2025-04-29",
        "source": "base qwen3-32b, catalogue",
        "state": "auto",
    }
    assert chip(browser, "family")["source"] == "base qwen3-32b"

    # a name the snapshot cannot place, with its base given by hand
    browser.execute_script(RECORD_PREDICTS)
    name = browser.find_element("id", "side-model")
    type_over(name, "acme-merge\t")
    wait(browser, lambda d: chip(d, "base")["value"] == "", "no base in the name")
    base = browser.find_element("id", "side-base")
    base.send_keys("qwen3-32b\n")
    wait(browser, lambda d: predicts(d) and predicts(d)[-1].get("base") == "qwen3-32b")
    assert predicts(browser)[-1] == {
        "scores": PROBES,
        "level": 0.9,
        "model": "acme-merge",
        "base": "qwen3-32b",
    }
    expected = bp.predict(PROBES, model="acme-merge", base="qwen3-32b")
    wait(browser, lambda d: side_line(d) == f"Side information: {expected.side.describe()}")
    wait(browser, lambda d: chip(d, "release_date")["value"] == "2025-04-29", "the base's date")
    assert chip(browser, "base")["state"] == "given"
    assert "base=qwen3-32b" in browser.current_url and "model_name=acme-merge" in (
        browser.current_url
    )


def test_a_results_files_model_fills_the_chips(
    app: RunningApp, browser: Any, bp: BenchPress, tmp_path: Path
) -> None:
    path = tmp_path / "results.csv"
    rows = [f"qwen3-32b-sft-v2,{b},{s}" for b, s in PROBES.items()]
    path.write_text("\n".join(["model,benchmark,score", *rows]) + "\n", encoding="utf-8")
    open_page(browser, app.url + "/")
    browser.find_element("id", "results-file").send_keys(str(path))
    wait(browser, lambda d: d.find_element("id", "side-model").get_attribute("value"))
    assert browser.find_element("id", "side-model").get_attribute("value") == "qwen3-32b-sft-v2"
    assert browser.find_element("id", "side-info").get_attribute("open") == "true"
    wait(browser, lambda d: chip(d, "release_date")["value"] == "2025-04-29", "the base's date")
    expected = bp.predict(PROBES, model="qwen3-32b-sft-v2")
    wait(browser, lambda d: side_line(d) == f"Side information: {expected.side.describe()}")
    assert side_line(browser) == (
        "Side information: base qwen3-32b (fine-tune, from the name): family qwen3, release "
        "date 2025-04-29 (catalogue)"
    )
    assert chip(browser, "family") == {
        "value": "qwen3",
        "source": "base qwen3-32b",
        "state": "auto",
    }
    # forgetting the file forgets the name it gave
    browser.find_element("css selector", "#upload-card button.ghost").click()
    wait(browser, lambda d: d.find_element("id", "side-model").get_attribute("value") == "")
    bare = bp.predict(PROBES)
    wait(browser, lambda d: side_line(d) == f"Side information: {bare.side.describe()}")


def test_a_date_outside_the_fit_is_refused_and_the_link_keeps_name_and_date(
    app: RunningApp, browser: Any, bp: BenchPress
) -> None:
    from predictor.api import ReleaseDateError

    open_page(browser, app.url + PAGE + "&model_name=my-model")
    named = bp.predict(PROBES, model="my-model")
    wait(browser, lambda d: side_line(d) == f"Side information: {named.side.describe()}")

    # issue 38: 2035 was extrapolated (swe_bench_verified 92.75 [92.25, 92.82]); now the
    # page shows the Python API's own message, with the range
    with pytest.raises(ReleaseDateError) as caught:
        bp.predict(PROBES, model="my-model", release_date="2035-01-01")
    set_date(browser, "2035-01-01")
    error = browser.find_element("id", "predict-error")
    wait(browser, lambda d: error.text == str(caught.value), "the refusal under the form")
    assert "2020-08-05 to 2027-07-01" in error.text
    link = browser.find_element("id", "share-link").get_attribute("href")
    assert "model_name=my-model" in link and "release_date=2035-01-01" in link

    # a date inside the range predicts again; the link carries the name and the date and
    # reproduces the same prediction
    set_date(browser, "2027-07-01")
    given = bp.predict(PROBES, model="my-model", release_date="2027-07-01")
    wait(browser, lambda d: side_line(d) == f"Side information: {given.side.describe()}")
    wait(browser, lambda d: not d.find_element("id", "predict-error").text, "the error gone")
    wait(browser, lambda d: score(d, "swe_bench_verified") == given["swe_bench_verified"].score)
    link = browser.find_element("id", "share-link").get_attribute("href")
    assert "model_name=my-model" in link and "release_date=2027-07-01" in link
    open_page(browser, link)
    assert browser.find_element("id", "side-model").get_attribute("value") == "my-model"
    assert chip(browser, "release_date")["value"] == "2027-07-01"
    wait(browser, lambda d: side_line(d) == f"Side information: {given.side.describe()}")
    wait(browser, lambda d: score(d, "swe_bench_verified") == given["swe_bench_verified"].score)
