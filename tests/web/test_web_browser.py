"""The page in headless Chromium: type probes, share links, known models, provenance, the
matrix, and hostile leaderboard strings that must stay text. Screenshots go to
test-artifacts/web/."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from predictor import BenchPress
from predictor.util.paths import bundled_snapshot_dir
from predictor.web.api import suggested_probes
from tests.web.conftest import (
    BUNDLED_VERSION,
    HOLDOUT_PAIRS,
    HOSTILE_BENCHMARKS,
    HOSTILE_MODELS,
    HOSTILE_VERSION,
    RunningApp,
    open_page,
    table_rows,
    wait,
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())


def score_cell(driver: Any, benchmark: str) -> Any:
    return driver.find_element(
        "css selector", f'#prediction-table tbody tr[data-benchmark="{benchmark}"] td.score'
    )


def assert_clean_console(driver: Any) -> None:
    """No script errors and no CSP violations (both are SEVERE console entries)."""
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe


def shot(driver: Any, artifacts: Path, name: str) -> None:
    driver.save_screenshot(str(artifacts / f"{name}.png"))


def test_type_probe_scores_and_see_predictions(
    app: RunningApp, browser: Any, bp: BenchPress, artifacts: Path
) -> None:
    open_page(browser, app.url + "/")
    rows = browser.find_elements("css selector", "#probe-rows tr")
    assert len(rows) == 1
    rows[0].find_element("css selector", ".probe-benchmark").send_keys("gpqa_diamond")
    rows[0].find_element("css selector", ".probe-score").send_keys("80")
    browser.find_element("id", "add-row").click()
    second = browser.find_elements("css selector", "#probe-rows tr")[1]
    second.find_element("css selector", ".probe-benchmark").send_keys("mmlu_pro")
    second.find_element("css selector", ".probe-score").send_keys("80")
    browser.find_element("id", "predict-button").click()

    expected = bp.predict({"gpqa_diamond": 80, "mmlu_pro": 80})
    wait(browser, lambda d: len(table_rows(d)) == len(expected), "prediction table")
    wait(browser, lambda d: "scores=gpqa_diamond=80,mmlu_pro=80" in d.current_url, "URL")
    value, text = wait(
        browser,
        lambda d: (
            score_cell(d, "hle").get_attribute("data-value"),
            score_cell(d, "hle").text,
        ),
        "hle cell",
    )
    assert float(value) == expected["hle"].score
    assert text == f"{expected['hle'].score:.1f}"
    probe_class = wait(
        browser,
        lambda d: d.find_element("css selector", 'tr[data-benchmark="gpqa_diamond"]').get_attribute(
            "class"
        ),
        "probe row",
    )
    assert "probe" in probe_class
    # the trust figure: P(|err| <= 5) as a whole percentage, blank for probes and open scales
    trust = {
        b: browser.find_element("css selector", f'tr[data-benchmark="{b}"] td.trust').text
        for b in ("hle", "gpqa_diamond", "chatbot_arena_elo")
    }
    assert trust == {
        "hle": f"{round(100 * expected['hle'].p_within_5)}%",
        "gpqa_diamond": "",
        "chatbot_arena_elo": "",
    }
    # the chart: one point per percent benchmark, probes drawn as diamonds
    percent = [b for b in expected if bp._scale[b] == "percent"]
    assert len(browser.find_elements("css selector", "#predict-chart g.row")) == len(percent)
    assert len(browser.find_elements("css selector", "#predict-chart rect.observed")) == 2

    # sortable: one list (not grouped by category), by benchmark name, ascending
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("id", "table-order")).select_by_value("score")
    browser.find_element("css selector", 'button.sort[data-key="benchmark"]').click()
    names = wait(
        browser,
        lambda d: [r.find_element("css selector", ".bname").text for r in table_rows(d)[:5]],
        "sorted names",
    )
    assert names == sorted(names, key=str.lower)
    assert_clean_console(browser)
    shot(browser, artifacts, "predict_typed")


def test_shared_link_shows_the_prediction_on_load(
    app: RunningApp, browser: Any, bp: BenchPress, artifacts: Path
) -> None:
    open_page(browser, app.url + "/?scores=gpqa_diamond=80,hle=20&level=0.8")
    expected = bp.predict({"gpqa_diamond": 80, "hle": 20}, level=0.8)
    wait(browser, lambda d: len(table_rows(d)) == len(expected), "prediction table")
    values = [
        i.get_attribute("value") for i in browser.find_elements("css selector", "#probe-rows input")
    ]
    assert values == ["gpqa_diamond", "80", "hle", "20"]
    assert browser.find_element("id", "level").get_attribute("value") == "0.8"
    mmlu = browser.find_element("css selector", 'tr[data-benchmark="mmlu_pro"]')
    cells = [td.text for td in mmlu.find_elements("css selector", "td.num")]
    p = expected["mmlu_pro"]
    assert cells[:2] == [f"{p.score:.1f}", f"{p.low:.1f}–{p.high:.1f}"]  # low–high
    assert "80% intervals" in browser.find_element("id", "predict-summary").text

    # an error from the API is shown as the Python API words it, and the URL follows the input
    score = browser.find_elements("css selector", "#probe-rows .probe-score")[1]
    score.clear()
    score.send_keys("200")
    error = browser.find_element("id", "predict-error")
    wait(browser, lambda d: error.is_displayed(), "error shown")
    assert error.text == "score for 'hle' must lie in 0-100 (percent), got 200"
    wait(browser, lambda d: "hle=200" in d.current_url, "URL follows the input")
    shot(browser, artifacts, "predict_shared_link_error")


def test_pick_a_known_model_shows_provenance(
    app: RunningApp, browser: Any, bp: BenchPress, artifacts: Path
) -> None:
    open_page(browser, app.url + "/")
    browser.find_element("id", "model-input").send_keys("gpt-5.2")
    browser.find_element("id", "model-use").click()
    card = browser.find_element("id", "model-card")
    wait(browser, lambda d: card.is_displayed(), "model card")
    assert card.find_element("css selector", "h2").text == "GPT-5.2"

    own = bp.scores().filter(bp.scores()["model_id"] == "gpt-5.2")
    observed = dict(own.select("benchmark_id", "score").iter_rows())
    suggested = suggested_probes(bp, "gpt-5.2")  # the API's rule, tested in test_web_api
    wait(browser, lambda d: len(table_rows(d)) == len(bp.fit_benchmarks_), "prediction table")
    inputs = browser.find_elements("css selector", "#probe-rows input")
    pairs = [
        (inputs[i].get_attribute("value"), inputs[i + 1].get_attribute("value"))
        for i in range(0, len(inputs), 2)
    ]
    assert [b for b, _ in pairs] == suggested
    assert [float(v) for _, v in pairs] == [pytest.approx(observed[b]) for b in suggested]
    # the picked model's name goes with its scores: its own family and release date
    expected = bp.predict({b: observed[b] for b in suggested}, model="gpt-5.2")
    assert float(score_cell(browser, "hle").get_attribute("data-value")) == expected["hle"].score
    assert browser.find_element("id", "side-model").get_attribute("value") == "gpt-5.2"

    link = card.find_element("css selector", 'tr[data-benchmark="gpqa_diamond"] a.prov-link')
    url = own.filter(own["benchmark_id"] == "gpqa_diamond")["url"].item()
    assert link.get_attribute("href") == url
    assert link.get_attribute("rel") == "noopener noreferrer"
    assert "model=gpt-5.2" in browser.current_url

    # unticking a probe in the provenance table removes it and re-predicts
    dropped = suggested[-1]
    card.find_element("css selector", f'input.use-probe[data-benchmark="{dropped}"]').click()
    wait(
        browser,
        lambda d: len(d.find_elements("css selector", "#probe-rows tr")) == 4,
        "probe removed",
    )
    wait(browser, lambda d: f"{dropped}=" not in d.current_url, "URL updated")
    assert_clean_console(browser)
    shot(browser, artifacts, "predict_known_model")


def test_matrix_cell_provenance_and_fit_plots(
    app: RunningApp, browser: Any, bp: BenchPress, artifacts: Path
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    open_page(browser, app.url + "/?view=matrix&cell=gpt-5.2,gpqa_diamond")
    card = browser.find_element("id", "cell-card")
    wait(browser, lambda d: card.find_elements("css selector", "a.prov-link"), "cell provenance")
    own = (
        bp.scores()
        .filter(
            (bp.scores()["model_id"] == "gpt-5.2") & (bp.scores()["benchmark_id"] == "gpqa_diamond")
        )
        .row(0, named=True)
    )
    assert card.find_element("css selector", "a.prov-link").get_attribute("href") == own["url"]
    assert own["payload_sha256"] in card.text and "92.40" in card.text
    shot(browser, artifacts, "matrix_cell")

    # a real click on the first cell of the heatmap opens that cell
    browser.execute_script("window.scrollTo(0, 0)")
    canvas = browser.find_element("css selector", "canvas.heatmap")
    box = browser.execute_script(
        "const r = arguments[0].getBoundingClientRect(), h = arguments[0].heatmap;"
        "return [r.left + h.labelW, r.top + h.top];",
        canvas,
    )
    actions = ActionBuilder(browser)
    actions.pointer_action.move_to_location(int(box[0]) + 6, int(box[1]) + 6).click()
    actions.perform()
    wait(browser, lambda d: "cell=gpt-5.2,gpqa_diamond" not in d.current_url, "cell changed")
    chosen = unquote(browser.current_url.split("cell=")[1].split("&")[0]).split(",")
    assert chosen[0] in bp.models and chosen[1] in bp.benchmarks
    ActionChains(browser).move_to_element(canvas).perform()  # hover shows a tooltip

    browser.find_element("css selector", '#tabs button[data-view="fit"]').click()
    wait(browser, lambda d: d.find_elements("css selector", "#loadings-chart circle"), "plots")
    assert len(browser.find_elements("css selector", "#loadings-chart circle")) == len(
        bp.fit_benchmarks_
    )
    bars = browser.find_elements("css selector", "#spectrum-chart rect.bar")
    assert len(bars) == len(bp.manifest["quality"]["singular_values"])
    # held-out pairs from the snapshot's residuals.parquet (issue 16)
    holdout = len(browser.find_elements("css selector", "#holdout-chart circle"))
    assert holdout == bp.manifest["quality"]["holdout_cells"]
    assert "view=fit" in browser.current_url
    assert_clean_console(browser)
    shot(browser, artifacts, "fit_plots")


def test_compare_models(app: RunningApp, browser: Any, artifacts: Path) -> None:
    open_page(
        browser,
        app.url
        + "/?view=compare&models=gpt-5.2,claude-opus-4.5&benchmarks=gpqa_diamond,hle,aime_2025",
    )
    table = browser.find_element("id", "compare-table")
    wait(browser, lambda d: len(table.find_elements("css selector", "tbody tr")) == 3, "table")
    heads = [th.text for th in table.find_elements("css selector", "thead th")]
    assert heads == ["Benchmark", "GPT-5.2", "Claude Opus 4.5"]
    first = table.find_element("css selector", 'tbody tr[data-benchmark="gpqa_diamond"]')
    assert [
        td.get_attribute("data-value") for td in first.find_elements("css selector", "td.num")
    ] == ["92.4", "87"]
    browser.find_element("id", "compare-model-input").send_keys("gemini-3-pro")
    browser.find_element("id", "compare-model-add").click()
    wait(browser, lambda d: "models=gpt-5.2,claude-opus-4.5,gemini-3-pro" in d.current_url, "URL")
    wait(browser, lambda d: len(table.find_elements("css selector", "thead th")) == 4, "column")
    assert_clean_console(browser)
    shot(browser, artifacts, "compare")


def test_hostile_names_stay_text(hostile_app: RunningApp, browser: Any, artifacts: Path) -> None:
    img, script = HOSTILE_MODELS["gpt-5.2"], HOSTILE_MODELS["gemini-3-pro"]
    open_page(browser, hostile_app.url + "/?model=gpt-5.2")
    card = browser.find_element("id", "model-card")
    wait(browser, lambda d: card.is_displayed(), "model card")
    assert card.find_element("css selector", "h2").text == img
    wait(browser, lambda d: len(table_rows(d)) > 100, "prediction table")
    gpqa = browser.find_element("css selector", 'tr[data-benchmark="gpqa_diamond"] .bname')
    assert gpqa.text == HOSTILE_BENCHMARKS["gpqa_diamond"]
    shot(browser, artifacts, "hostile_predict")

    browser.find_element("css selector", '#tabs button[data-view="compare"]').click()
    open_page(
        browser,
        hostile_app.url + "/?view=compare&models=gpt-5.2,gemini-3-pro&benchmarks=gpqa_diamond,hle",
    )
    table = browser.find_element("id", "compare-table")
    wait(browser, lambda d: len(table.find_elements("css selector", "thead th")) == 3, "table")
    assert [th.text for th in table.find_elements("css selector", "thead th")][1:] == [img, script]
    chips = [
        c.text.rstrip("×").strip()
        for c in browser.find_elements("css selector", "#compare-models .chip")
    ]
    assert chips == [img, script]
    shot(browser, artifacts, "hostile_compare")

    open_page(browser, hostile_app.url + "/?view=matrix&cell=gemini-3-pro,gpqa_diamond")
    cell = browser.find_element("id", "cell-card")
    wait(browser, lambda d: script in cell.text, "cell card")

    injected = browser.execute_script(
        "return {imgs: [...document.images].filter(i => !i.classList.contains('logo')).length,"
        " scripts: document.scripts.length, bolds: document.querySelectorAll('b').length,"
        " alerts: window.__alerts.length}"
    )
    assert injected == {"imgs": 0, "scripts": 1, "bolds": 0, "alerts": 0}
    assert_clean_console(browser)

    # predicted vs actual is drawn when the manifest records held-out pairs
    open_page(browser, hostile_app.url + "/?view=fit")
    wait(browser, lambda d: d.find_elements("css selector", "#holdout-chart circle"), "holdout")
    dots = browser.find_elements("css selector", "#holdout-chart circle")
    assert len(dots) == HOLDOUT_PAIRS
    assert f"{HOLDOUT_PAIRS} held-out cells" in browser.find_element("id", "holdout-chart").text
    shot(browser, artifacts, "fit_plots_with_holdout")

    # the version chooser: the older version has the real names
    from selenium.webdriver.support.ui import Select

    open_page(browser, hostile_app.url + "/?model=gpt-5.2")
    versions = Select(browser.find_element("id", "version"))
    assert [o.get_attribute("value") for o in versions.options] == [HOSTILE_VERSION, "2026.11.30.1"]
    versions.select_by_value("2026.11.30.1")
    wait(browser, lambda d: "version=2026.11.30.1" in d.current_url, "version in URL")
    card = browser.find_element("id", "model-card")
    wait(browser, lambda d: card.find_element("css selector", "h2").text == "GPT-5.2", "renamed")
    assert "snapshot 2026.11.30.1" in browser.find_element("id", "predict-summary").text


def picked(driver: Any) -> list[str]:
    rows = driver.find_elements("css selector", "#picker-table tbody tr.picked")
    return [r.get_attribute("data-benchmark") for r in rows]


def test_pick_probes_under_a_budget_and_use_them(
    app: RunningApp, browser: Any, bp: BenchPress, artifacts: Path
) -> None:
    from selenium.webdriver.support.ui import Select

    open_page(browser, app.url + "/")
    browser.find_element("id", "goto-picker").click()
    targets = browser.find_element("id", "picker-targets")
    wait(browser, lambda d: len(Select(targets).options) == 6, "profiles loaded")
    assert Select(targets).first_selected_option.get_attribute("value") == "general_assistant"
    note = browser.find_element("id", "picker-default-note").text
    assert "General assistant profile" in note and "several seconds per probe" in note
    assert browser.find_element("id", "picker-unit").text == "standard benchmark runs"
    assert "Cost units: 1 = one typical" in browser.find_element("id", "picker-cost-note").text

    Select(targets).select_by_value("coding_assistant")
    assert "HumanEval" in browser.find_element("id", "picker-target-list").text
    k = browser.find_element("id", "picker-k")
    k.clear()
    k.send_keys("4")
    browser.find_element("id", "picker-budget").send_keys("5")
    browser.find_element("id", "picker-run").click()

    expected = bp.select_probes(k=4, budget=5, targets="coding_assistant")
    wait(browser, lambda d: picked(d) == expected.benchmarks, "chosen probes")
    costs = [
        c.text for c in browser.find_elements("css selector", "#picker-table tr.picked td.cost")
    ]
    assert costs == [f"{c:g}" for c in expected.costs]
    summary = browser.find_element("id", "picker-summary").text
    assert f"{len(expected.columns)} probes for the Coding assistant profile" in summary
    assert f"total cost {expected.total_cost:g} of a budget of 5 standard benchmark runs" in summary
    assert f"expected error {expected.errors[-1]:.2f}" in summary
    assert f"(no probe: {expected.baseline_error:.2f})" in summary
    wait(
        browser,
        lambda d: "view=probes&k=4&budget=5&targets=coding_assistant" in d.current_url,
        "shareable link",
    )
    share = browser.find_element("id", "picker-share").get_attribute("href")
    assert share == browser.current_url
    assert_clean_console(browser)
    shot(browser, artifacts, "probes_picked")

    browser.find_element("id", "picker-use").click()
    wait(browser, lambda d: d.find_element("id", "view-predict").is_displayed(), "predict view")
    rows = browser.find_elements("css selector", "#probe-rows tr")
    names = [
        r.find_element("css selector", ".probe-benchmark").get_attribute("value") for r in rows
    ]
    assert names == expected.benchmarks
    assert all(
        r.find_element("css selector", ".probe-score").get_attribute("value") == "" for r in rows
    )
    waiting = f"Enter the scores of the {len(names)} benchmarks you ran."
    assert browser.find_element("id", "predict-summary").text == waiting
    assert not browser.find_element("id", "predict-error").is_displayed()
    # the first score is enough to predict; the others wait without an error
    rows[0].find_element("css selector", ".probe-score").send_keys("70")
    wait(browser, lambda d: len(table_rows(d)) == len(bp.fit_benchmarks_), "prediction table")
    first = expected.benchmarks[0]
    value = bp.predict({first: 70})["hle"].score
    wait(
        browser,
        lambda d: float(score_cell(d, "hle").get_attribute("data-value")) == value,
        "prediction from the first probe",
    )
    assert f"{len(names) - 1} benchmarks without a score yet" in (
        browser.find_element("id", "predict-summary").text
    )
    assert not browser.find_element("id", "predict-error").is_displayed()
    wait(browser, lambda d: f"scores={first}=70," in d.current_url, "URL keeps waiting rows")
    assert_clean_console(browser)
    shot(browser, artifacts, "probes_used")


def test_probe_link_runs_on_load_and_shows_errors(
    app: RunningApp, browser: Any, bp: BenchPress, artifacts: Path
) -> None:
    open_page(browser, app.url + "/?view=probes&k=3&targets=reasoning")
    expected = bp.select_probes(k=3, targets="reasoning")
    wait(browser, lambda d: picked(d) == expected.benchmarks, "picked on load")
    assert browser.find_element("id", "picker-targets").get_attribute("value") == "reasoning"

    open_page(browser, app.url + "/?view=probes&k=2&budget=0.1&targets=chat")
    error = browser.find_element("id", "picker-error")
    wait(browser, lambda d: error.is_displayed(), "error shown")
    assert error.text == (
        "budget 0.1 is too small: the cheapest allowed probe costs 0.25 standard benchmark "
        "runs (e.g. aider_code_editing_whole)"
    )
    assert browser.find_element("id", "picker-use").get_attribute("disabled") is not None

    # chosen benchmarks as targets, with a typo named by the server
    open_page(browser, app.url + "/?view=probes&k=2&targets=livecodebench,gpqa_diamnd")
    error = browser.find_element("id", "picker-error")
    wait(browser, lambda d: error.is_displayed(), "typo named")
    assert error.text.startswith("targets: unknown benchmark 'gpqa_diamnd'; did you mean")
    assert browser.find_element("id", "picker-targets").get_attribute("value") == "custom"
    browser.get_log("browser")  # drop the 400s above (logged as network errors)
    chips = browser.find_elements("css selector", "#picker-custom-chips .chip")
    chips[-1].find_element("css selector", "button").click()
    browser.find_element("id", "picker-run").click()
    expected = bp.select_probes(k=2, targets=["livecodebench"])
    wait(browser, lambda d: picked(d) == expected.benchmarks, "picked after the fix")
    wait(browser, lambda d: "targets=livecodebench" in d.current_url, "URL")
    assert not error.is_displayed()
    assert_clean_console(browser)
    shot(browser, artifacts, "probes_custom_targets")


def test_picked_probe_names_stay_text(hostile_app: RunningApp, browser: Any) -> None:
    open_page(browser, hostile_app.url + "/?view=probes&k=1&budget=6&targets=coding_assistant")
    wait(browser, lambda d: picked(d) == ["gpqa_diamond"], "picked")
    row = browser.find_element("css selector", '#picker-table tr[data-benchmark="gpqa_diamond"]')
    assert row.find_element("css selector", ".bname").text == HOSTILE_BENCHMARKS["gpqa_diamond"]
    assert browser.execute_script("return document.querySelectorAll('b').length") == 0
    assert browser.execute_script("return window.__alerts.length") == 0
    assert_clean_console(browser)
