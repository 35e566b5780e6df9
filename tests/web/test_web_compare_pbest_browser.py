"""The Compare tab in headless Chromium: each model's P(best) and expected rank per benchmark
and across those shown, the P(A > B) matrix, an ambiguous name in a link (its variants
offered, the other models compared) and a long model name at 1400 px (the table whole)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.web.conftest import RunningApp, open_page, wait

MODELS = ["gpt-5", "claude-sonnet-4", "gemini-2.5-pro"]
BENCHMARKS = ["gpqa_diamond", "mmlu_pro", "swe_bench_verified"]
# the longest model name of the bundled snapshot (102 characters, no spaces)
LONG = (
    "joseph717171/hermes-3-llama-3.1-8b-ties-with-base-embeds-initialized-to-special-instruct-"
    "toks-dtypef32"
)
LONG_NAME = (
    "Joseph717171/Hermes-3-Llama-3.1-8B_TIES_with_Base_Embeds_Initialized_to_Special_Instruct_"
    "Toks_dtypeF32"
)


def chance(p: float) -> str:
    """The page's percentage (tab-compare.js `chance`)."""
    if 0 < p < 0.005:
        return "<1%"
    if 0.995 < p < 1:
        return ">99%"
    return f"{round(p * 100)}%"


def texts(browser: Any, selector: str) -> list[str]:
    return browser.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((n) => n.textContent)", selector
    )


def test_compare_shows_p_best_expected_rank_and_pairwise_and_offers_ambiguous_variants(
    app: RunningApp, browser: Any, artifacts: Path
) -> None:
    query = f"models={','.join([MODELS[0], 'o3', *MODELS[1:]])}&benchmarks={','.join(BENCHMARKS)}"
    api = app.get(f"/api/compare?{query}").json()
    assert api["ambiguous"] == [{"name": "o3", "variants": ["o3-high", "o3@low", "o3@medium"]}]
    assert [m["model_id"] for m in api["models"]] == MODELS

    open_page(browser, app.url + f"/?view=compare&{query}")
    rows = "#compare-table tbody tr"
    wait(browser, lambda d: len(d.find_elements("css selector", rows)) == 3, "compare rows")
    # the ambiguous name is offered as its variants; the three others are compared
    notice = browser.find_element("id", "compare-ambiguous")
    assert notice.is_displayed() and "“o3” could be several models" in notice.text
    assert texts(browser, "#compare-ambiguous button.variant") == [
        "o3-high",
        "o3@low",
        "o3@medium",
    ]
    names = [m["name"] for m in api["models"]]
    assert texts(browser, "#compare-models .chip > span") == names

    # per benchmark: P(best) and expected rank under each score, as the API gives them
    for r, row in enumerate(api["rows"]):
        shown = texts(browser, f"#compare-table tbody tr:nth-child({r + 1}) .odds")
        assert shown == [
            f"P(best) {chance(p)} · rank {e:.1f}"
            for p, e in zip(row["p_best"], row["expected_rank"], strict=True)
        ]
    # across the benchmarks shown
    across = api["overall"]
    assert across["benchmarks"] == BENCHMARKS
    heading = browser.find_element("css selector", "#compare-overall h3").text
    assert heading == "Across the 3 benchmarks where every model has a score"
    assert texts(browser, "#compare-overall-table td.p-best") == [
        chance(p) for p in across["p_best"]
    ]
    assert texts(browser, "#compare-overall-table td.e-rank") == [
        f"{e:.1f}" for e in across["expected_rank"]
    ]
    # P(A > B) on the first benchmark, every pair; another benchmark chosen shows its own
    first = api["rows"][0]["p_better"]
    for i, model in enumerate(MODELS):
        cells = texts(browser, f"#compare-pairwise-table tbody tr[data-model='{model}'] td")
        assert cells == ["" if i == j else chance(first[i][j]) for j in range(3)]
    browser.execute_script(
        "const s = document.getElementById('compare-pair-benchmark');"
        "s.value = 'swe_bench_verified'; s.dispatchEvent(new Event('change'));"
    )
    last = api["rows"][2]["p_better"]
    cells = texts(browser, f"#compare-pairwise-table tbody tr[data-model='{MODELS[0]}'] td")
    assert cells == ["", chance(last[0][1]), chance(last[0][2])]
    browser.save_screenshot(str(artifacts / "compare_pbest.png"))

    # choosing a variant adds it; the notice goes
    browser.find_element("css selector", "#compare-ambiguous button[data-model='o3-high']").click()
    wait(browser, lambda d: "o3-high" in d.current_url, "variant in the link")
    wait(
        browser,
        lambda d: len(d.find_elements("css selector", "#compare-overall-table tbody tr")) == 4,
        "four models",
    )
    assert not browser.find_element("id", "compare-ambiguous").is_displayed()


def test_a_long_model_name_keeps_the_compare_table_whole_at_1400px(
    app: RunningApp, browser: Any, artifacts: Path
) -> None:
    size = browser.get_window_size()
    browser.set_window_size(1400, 1000)
    try:
        open_page(browser, app.url + f"/?view=compare&models={LONG},{','.join(MODELS)},o3-high")
        rows = "#compare-table tbody tr"
        wait(browser, lambda d: len(d.find_elements("css selector", rows)) >= 1, "compare rows")
        fit = browser.execute_script(
            "const t = document.getElementById('compare-table');"
            "const w = t.closest('.table-wrap');"
            "const last = t.tHead.rows[0].lastElementChild.getBoundingClientRect();"
            "return {table: t.scrollWidth, wrap: w.clientWidth,"
            " right: last.right, edge: w.getBoundingClientRect().right,"
            " page: document.documentElement.scrollWidth, view: window.innerWidth};"
        )
        browser.save_screenshot(str(artifacts / "compare_long_name.png"))
        # the whole table is inside its frame: no column cut off or scrolled out of sight
        assert fit["table"] <= fit["wrap"] + 1, fit
        assert fit["right"] <= fit["edge"] + 1, fit
        assert fit["page"] <= fit["view"], fit  # and the page does not scroll sideways
        # the name whole, wrapped onto lines within its column
        header = texts(browser, "#compare-table thead th:nth-child(2) .mname")
        assert header == [LONG_NAME]
    finally:
        browser.set_window_size(size["width"], size["height"])


def test_a_misspelt_name_in_a_link_is_offered_its_matches_and_the_others_compared(
    app: RunningApp, browser: Any
) -> None:
    """`claude-sonet-4` in a shared link: before, the whole comparison was refused and an
    empty card shown; now the two other models are compared and the close matches offered."""
    query = "models=gpt-4o,o3-high,claude-sonet-4&benchmarks=gpqa_diamond,mmlu_pro"
    api = app.get(f"/api/compare?{query}").json()
    assert [m["model_id"] for m in api["models"]] == ["gpt-4o", "o3-high"]
    assert api["ambiguous"] == []
    [unknown] = api["unknown"]
    assert unknown["name"] == "claude-sonet-4" and unknown["variants"][0] == "claude-sonnet-4"

    open_page(browser, app.url + f"/?view=compare&{query}")
    rows = "#compare-table tbody tr"
    wait(browser, lambda d: len(d.find_elements("css selector", rows)) == 2, "compare rows")
    notice = browser.find_element("id", "compare-ambiguous")
    assert notice.is_displayed()
    assert "“claude-sonet-4” is not a model of this snapshot, left out; did you mean:" in (
        notice.text
    )
    assert texts(browser, "#compare-ambiguous button.variant") == unknown["variants"]
    assert texts(browser, "#compare-error") == [""]
    browser.find_element(
        "css selector", "#compare-ambiguous button[data-model='claude-sonnet-4']"
    ).click()
    wait(
        browser,
        lambda d: len(d.find_elements("css selector", "#compare-overall-table tbody tr")) == 3,
        "three models",
    )
    assert "claude-sonnet-4" in browser.current_url

    # every name unknown: the error, as before
    answer = app.get("/api/compare?models=claude-sonet-4")
    assert answer.status == 400
    assert "unknown model 'claude-sonet-4'; did you mean: claude-sonnet-4" in answer.json()["error"]
