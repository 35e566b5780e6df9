"""The page at its edges, in headless Chromium: a 400 px phone (no sideways page scroll, the
tabs on screen, axis labels apart), 1400 px tables that fit or scroll where they are, a tidy
CSV naming a benchmark the snapshot lacks (listed, the rest used), the empty states' examples,
and the Fit tab's rank, shares, legends and distinct tick labels. Screenshots go to
test-artifacts/web/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from predictor import BenchPress
from predictor.util.paths import bundled_snapshot_dir
from tests.web.conftest import (
    BUNDLED_VERSION,
    RUN,
    RUN_STEPS,
    RunningApp,
    open_page,
    table_rows,
    wait,
)

pytestmark = pytest.mark.browser

EXAMPLE = {"gpqa_diamond": 65.0, "mmlu_pro": 78.0, "ifeval": 86.0}


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())


@pytest.fixture
def phone(browser: Any) -> Iterator[Any]:
    """The browser at a phone's 400 px, back to the fixtures' window afterwards."""
    before = browser.get_window_size()
    browser.set_window_size(400, 860)
    try:
        yield browser
    finally:
        browser.set_window_size(before["width"], before["height"])


@pytest.fixture
def wide(browser: Any) -> Iterator[Any]:
    before = browser.get_window_size()
    browser.set_window_size(1400, 1000)
    try:
        yield browser
    finally:
        browser.set_window_size(before["width"], before["height"])


def overlapping(driver: Any, selector: str) -> list[list[str]]:
    """Pairs of elements matched by `selector` whose boxes overlap (labels drawn over others)."""
    return driver.execute_script(
        """const boxes = [...document.querySelectorAll(arguments[0])]
             .map((e) => [e.textContent, e.getBoundingClientRect()]);
           const out = [];
           boxes.forEach(([a, r], i) => boxes.slice(i + 1).forEach(([b, s]) => {
             if (r.left < s.right && s.left < r.right && r.top < s.bottom && s.top < r.bottom)
               out.push([a, b]);
           }));
           return out;""",
        selector,
    )


# --------------------------------------------------------------------------------- 400 px
VIEWS = (
    "/?scores=gpqa_diamond=65,mmlu_pro=78,ifeval=86",
    "/?view=probes",
    "/?view=compare",
    "/?view=new-benchmark&known=gpt-4o=61.2,claude-sonnet-4=66,o3=80.5",
    "/?view=matrix",
    "/?view=fit",
    "/?view=runs",
)


@pytest.mark.parametrize("path", VIEWS)
def test_a_400px_phone_scrolls_no_view_sideways_and_shows_every_tab(
    app: RunningApp, phone: Any, path: str, artifacts: Path
) -> None:
    open_page(phone, app.url + path)
    # what each view draws once its data is in
    ready = {
        "/?scores": "#prediction-table tbody tr[data-benchmark]",
        "/?view=compare": "#compare-table tbody tr",
        "/?view=new-benchmark": "#nb-table tbody tr",
        "/?view=fit": "#loadings-chart circle",
        "/?view=matrix": "#matrix canvas",
        "/?view=runs": "#runs-empty",
        "/?view=probes": "#picker-targets option",
    }
    selector = next(s for start, s in ready.items() if path.startswith(start))
    wait(phone, lambda d: d.find_elements("css selector", selector), selector)
    width = phone.execute_script("return [document.documentElement.scrollWidth, innerWidth]")
    assert width[0] <= width[1], f"{path}: the page scrolls sideways {width}"
    tabs = phone.execute_script(
        "return [...document.querySelectorAll('#tabs button')]"
        ".map((b) => { const r = b.getBoundingClientRect();"
        " return [b.textContent, r.width > 0 && r.left >= 0 && r.right <= innerWidth]; })"
    )
    assert len(tabs) == 7 and all(inside for _, inside in tabs), tabs
    name = path.split("view=")[-1].split("&")[0] if "view=" in path else "predict"
    phone.save_screenshot(str(artifacts / f"edges_400_{name}.png"))
    if name == "predict":
        assert overlapping(phone, "#predict-chart .chart-axis text.tick") == []
    if name == "fit":
        assert overlapping(phone, "#loadings-chart text.tick") == []


# -------------------------------------------------------------------------------- 1400 px
def fits_or_scrolls(driver: Any, table_id: str) -> dict[str, Any]:
    return driver.execute_script(
        """const t = document.getElementById(arguments[0]); const wrap = t.parentElement;
           const style = getComputedStyle(wrap);
           return {table: t.scrollWidth, wrap: wrap.clientWidth, overflow: style.overflowX,
                   fits: t.getBoundingClientRect().right <= wrap.getBoundingClientRect().right
                         + 0.5};""",
        table_id,
    )


def test_at_1400px_the_run_next_table_fits_its_card(app: RunningApp, wide: Any) -> None:
    open_page(wide, app.url + "/?view=new-benchmark&known=gpt-4o=61.2,claude-sonnet-4=66,o3=80.5")
    wait(wide, lambda d: d.find_elements("css selector", "#nb-next tbody tr"), "run next")
    seen = fits_or_scrolls(wide, "nb-next")
    assert seen["table"] <= seen["wrap"] and seen["fits"], seen
    seen = fits_or_scrolls(wide, "nb-similar")
    assert seen["table"] <= seen["wrap"] and seen["fits"], seen


def test_at_1400px_the_runs_checkpoints_table_is_not_clipped(
    team_app: RunningApp, wide: Any, artifacts: Path
) -> None:
    open_page(wide, team_app.url + f"/?view=runs&run={RUN}")
    rows = "#run-table tbody tr"
    wait(wide, lambda d: len(d.find_elements("css selector", rows)) == len(RUN_STEPS), "rows")
    seen = fits_or_scrolls(wide, "run-table")
    # it fits, or its own box scrolls sideways (the page never cuts it off)
    assert (seen["table"] <= seen["wrap"]) or seen["overflow"] in ("auto", "scroll"), seen
    width = wide.execute_script("return [document.documentElement.scrollWidth, innerWidth]")
    assert width[0] <= width[1]
    wide.save_screenshot(str(artifacts / "edges_1400_runs.png"))


# ------------------------------------------------------------------- tidy CSV, unknown one
def test_a_tidy_csv_with_an_unknown_benchmark_lists_it_and_uses_the_rest(
    app: RunningApp, browser: Any, bp: BenchPress, tmp_path: Path, artifacts: Path
) -> None:
    path = tmp_path / "team-results.csv"
    path.write_text(
        "model,benchmark,score\n"
        "acme-7b,gpqa_diamond,41.5\n"
        "acme-7b,our_internal_qa,73\n"
        "acme-7b,mmlu_pro,55.25\n",
        encoding="utf-8",
    )
    open_page(browser, app.url + "/")
    browser.find_element("id", "results-file").send_keys(str(path))
    card = browser.find_element("id", "upload-card")
    wait(browser, lambda d: card.is_displayed() and "team-results.csv" in card.text, "card")
    expected = bp.predict({"gpqa_diamond": 41.5, "mmlu_pro": 55.25})
    wait(browser, lambda d: len(table_rows(d)) == len(expected), "prediction from the rest")
    assert browser.find_element("id", "upload-unknown").text.startswith("our_internal_qa (close: ")
    summary = card.find_element("css selector", "#upload-unknown").find_element("xpath", "../..")
    assert summary.find_element("tag name", "summary").text == (
        f"Not in snapshot {BUNDLED_VERSION}: 1 benchmark set aside, the rest used"
    )
    assert not browser.find_element("id", "results-error").is_displayed()
    for cli in ("benchpress", "--map", "--from"):
        assert cli not in card.text
    inputs = [
        i.get_attribute("value") for i in browser.find_elements("css selector", "#probe-rows input")
    ]
    assert inputs == ["gpqa_diamond", "41.5", "mmlu_pro", "55.25"]
    score = browser.find_element("css selector", 'tr[data-benchmark="hle"] td.score').text
    assert score == f"{expected['hle'].score:.1f}"
    browser.save_screenshot(str(artifacts / "edges_tidy_unknown.png"))


def test_the_api_sets_an_unknown_benchmark_aside_and_refuses_a_file_of_only_unknown_ones(
    app: RunningApp,
) -> None:
    body = b"model,benchmark,score\nm,gpqa_diamond,60\nm,our_internal_qa,70\n"
    answer = app.request(
        "/api/results?name=r.csv",
        data=body,
        headers={"Content-Type": "application/octet-stream"},
        method="POST",
    )
    assert answer.status == 200
    got = answer.json()
    assert [p["benchmark"] for p in got["probes"]] == ["gpqa_diamond"]
    assert [u["benchmark"] for u in got["unknown"]] == ["our_internal_qa"]
    only = app.request(
        "/api/results?name=r.csv",
        data=b"model,benchmark,score\nm,our_internal_qa,70\n",
        headers={"Content-Type": "application/octet-stream"},
        method="POST",
    )
    assert only.status == 400
    error = only.json()["error"]
    assert error.startswith(
        f"r.csv: no benchmark of snapshot {BUNDLED_VERSION} in the file; it names "
        "'our_internal_qa' (did you mean: "
    )
    assert error.endswith("? write a benchmark id or name as in the Matrix tab)")


# ------------------------------------------------------------------------- empty states
def test_no_upload_yet_offers_an_example_file(
    app: RunningApp, browser: Any, bp: BenchPress
) -> None:
    open_page(browser, app.url + "/")
    browser.find_element("id", "upload-example").click()
    card = browser.find_element("id", "upload-card")
    wait(browser, lambda d: card.is_displayed() and "example-results.csv" in card.text, "card")
    expected = bp.predict(EXAMPLE)
    wait(browser, lambda d: len(table_rows(d)) == len(expected), "the example's prediction")
    inputs = [
        i.get_attribute("value") for i in browser.find_elements("css selector", "#probe-rows input")
    ]
    assert inputs == ["gpqa_diamond", "65", "mmlu_pro", "78", "ifeval", "86"]


def test_no_runs_yet_links_an_example_prediction(
    app: RunningApp, browser: Any, bp: BenchPress
) -> None:
    open_page(browser, app.url + "/?view=runs")
    empty = browser.find_element("id", "runs-empty")
    wait(browser, lambda d: empty.is_displayed(), "no runs")
    link = browser.find_element("id", "runs-example")
    assert link.text == "try a prediction from three example scores"
    link.click()
    wait(browser, lambda d: len(table_rows(d)) == len(bp.predict(EXAMPLE)), "the prediction")


# ----------------------------------------------------------------------------------- fit
def test_the_fit_tab_names_the_rank_and_its_shares_as_the_plot_draws_them(
    app: RunningApp, browser: Any, bp: BenchPress, artifacts: Path
) -> None:
    rank = int(bp.manifest["fit_params"]["rank"])
    open_page(browser, app.url + "/?view=fit")
    wait(browser, lambda d: d.find_elements("css selector", "#spectrum-chart .share-dot"), "plot")
    assert browser.find_element("id", "spectrum-title").text == (
        f"Singular value spectrum · fitted rank {rank}"
    )
    dots = [
        t.get_attribute("textContent")
        for t in browser.find_elements("css selector", "#spectrum-chart .share-dot title")
    ]
    plotted = dots[rank - 1]  # "top 4: 99.1% cumulative"
    total = plotted.split(": ")[1].split(" ")[0]
    note = browser.find_element("id", "spectrum-note").text
    assert note.startswith(f"The fit keeps {rank} factors: together {total} of the variance")
    facts = browser.find_element("id", "manifest").text
    assert f"Fitted rank\n{rank} ({total} of the variance)" in facts
    # the darker bars are the factors kept
    assert len(browser.find_elements("css selector", "#spectrum-chart rect.bar.top")) == rank
    legend = browser.find_element("id", "spectrum-legend").text
    assert f"factors the fit keeps (σ1–σ{rank})" in legend and "cumulative variance" in legend
    assert "open-scale benchmark" in browser.find_element("id", "loadings-legend").text

    # the factor plane's axes never repeat a tick label
    ticks = browser.execute_script(
        "return [...document.querySelectorAll('#loadings-chart text.tick')]"
        ".map((t) => [t.getAttribute('text-anchor'), t.textContent])"
    )
    x = [text for anchor, text in ticks if anchor == "middle"]
    y = [text for anchor, text in ticks if anchor == "end"]
    assert len(x) >= 3 and len(x) == len(set(x)), x
    assert len(y) >= 3 and len(y) == len(set(y)), y
    browser.execute_script("document.getElementById('loadings-chart').scrollIntoView()")
    browser.save_screenshot(str(artifacts / "edges_fit.png"))
