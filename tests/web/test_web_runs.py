"""The team's private models and checkpoint runs on the page, over real HTTP and in headless
Chromium. The store is a real one (`warehouse.private_models`, as `benchpress models add` and
`benchpress track` write it) read through the `benchpress.private_models` entry point."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from predictor import BenchPress
from predictor.trust.profiles import profile
from predictor.util.paths import bundled_snapshot_dir
from predictor.web.catalog import Catalog
from tests.web.conftest import (
    BUNDLED_VERSION,
    HOSTILE_NAME,
    RUN,
    RUN_STEPS,
    TEAM_MODEL,
    TEAM_SCORES,
    RunningApp,
    open_page,
    run_scores,
    table_rows,
    wait,
)

TRACK = "benchpress track RUN --from 'ckpts/step-*/results*.json'"
HOSTILE_RUN = quote(HOSTILE_NAME, safe="")


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())


def cells(predictions: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        b: {"score": p.score, "low": p.low, "high": p.high, "observed": p.observed}
        for b, p in predictions.items()
    }


# --------------------------------------------------------------------------------- the API
def test_runs_are_listed_with_their_checkpoints(team_app: RunningApp) -> None:
    assert team_app.get("/api/runs").json() == {
        "runs": [
            {"run": HOSTILE_NAME, "checkpoints": 2, "first_step": 10, "last_step": 20},
            {"run": RUN, "checkpoints": 6, "first_step": 100, "last_step": 600},
        ],
        "command": TRACK,
    }


def test_no_runs_says_how_to_make_one(app: RunningApp) -> None:
    assert app.get("/api/runs").json() == {"runs": [], "command": TRACK}
    assert app.get("/api/private").json() == {
        "models": [],
        "command": "benchpress models add NAME --from results.json",
    }
    missing = app.get(f"/api/runs/{RUN}")
    assert missing.status == 404
    assert missing.json() == {"error": f"no run '{RUN}'; runs: none (create one: {TRACK})"}


def test_a_run_is_predicted_checkpoint_by_checkpoint(team_app: RunningApp, bp: BenchPress) -> None:
    answer = team_app.get(f"/api/runs/{RUN}?level=0.8")
    assert answer.status == 200
    body = answer.json()
    targets = profile("general_assistant", bp.fit_benchmarks_)
    assert {k: body[k] for k in ("version", "level", "run", "profile", "targets", "probes")} == {
        "version": BUNDLED_VERSION,
        "level": 0.8,
        "run": RUN,
        "profile": "general_assistant",
        "targets": targets,
        "probes": ["gpqa_diamond", "hle", "mmlu_pro"],
    }
    assert body["total_checkpoints"] == len(RUN_STEPS)
    assert [c["step"] for c in body["checkpoints"]] == list(RUN_STEPS)
    for checkpoint, step in zip(body["checkpoints"], RUN_STEPS, strict=True):
        scores = run_scores(step)
        assert checkpoint["name"] == f"{RUN}@step-{step}"
        assert checkpoint["observed"] == scores
        # every checkpoint is the run's model (its name gives the side information, as in
        # `benchpress track`)
        expected = bp.predict(scores, level=0.8, targets="general_assistant", model=RUN)
        assert checkpoint["predicted"] == cells(expected)
    # mmlu_pro is a target: predicted at step 100, observed from step 200 on
    first, second = body["checkpoints"][:2]
    assert first["predicted"]["mmlu_pro"]["observed"] is False
    assert second["predicted"]["mmlu_pro"] == {
        "score": 38.0,
        "low": 38.0,
        "high": 38.0,
        "observed": True,
    }


@pytest.mark.parametrize(
    ("targets", "expected"),
    [
        ("reasoning", None),
        ("hle,GPQA Diamond", ["hle", "gpqa_diamond"]),
    ],
)
def test_run_targets_are_a_profile_or_names(
    team_app: RunningApp, bp: BenchPress, targets: str, expected: list[str] | None
) -> None:
    body = team_app.get(f"/api/runs/{RUN}?targets={quote(targets)}").json()
    wanted = expected or profile(targets, bp.fit_benchmarks_)
    assert body["targets"] == wanted
    assert body["profile"] == (None if expected else targets)
    last = body["checkpoints"][-1]
    assert last["predicted"] == cells(
        bp.predict(run_scores(RUN_STEPS[-1]), targets=expected or targets, model=RUN)
    )


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        (
            "/api/runs/nope",
            404,
            f"no run 'nope'; runs: {HOSTILE_NAME}, {RUN} (create one: {TRACK})",
        ),
        (
            f"/api/runs/{RUN}?targets=codng",
            400,
            "targets: unknown profile or benchmark 'codng'; profiles: coding_assistant, chat, "
            "reasoning, general_assistant; did you mean: coding_assistant, scicode, "
            "facts_grounding?",
        ),
        (
            f"/api/runs/{RUN}?level=2",
            400,
            "level must lie strictly between 0 and 1, got 2.0",
        ),
        (
            f"/api/runs/{RUN}?step=1",
            400,
            "unknown parameter 'step' for /api/runs/<run>; expected: level, targets, version",
        ),
    ],
)
def test_run_requests_that_cannot_be_answered(
    team_app: RunningApp, path: str, status: int, message: str
) -> None:
    answer = team_app.get(path)
    assert (answer.status, answer.json()) == (status, {"error": message})


def test_a_long_run_is_thinned_evenly_keeping_both_ends() -> None:
    from predictor.web.private import MAX_CHECKPOINTS, thin

    points = list(range(1001))
    kept = thin(points)  # type: ignore[arg-type]
    assert len(kept) == MAX_CHECKPOINTS == 500
    assert kept[0] == 0 and kept[-1] == 1000 and kept == sorted(set(kept))
    assert max(b - a for a, b in zip(kept, kept[1:], strict=False)) == 3
    assert thin(points[:500]) == points[:500]  # type: ignore[arg-type]


def test_a_run_named_as_markup_is_just_a_name(team_app: RunningApp) -> None:
    body = team_app.get(f"/api/runs/{HOSTILE_RUN}").json()
    assert body["run"] == HOSTILE_NAME
    assert [c["name"] for c in body["checkpoints"]] == [f"{HOSTILE_NAME}@10", f"{HOSTILE_NAME}@20"]


def test_private_models_are_listed_apart(team_app: RunningApp) -> None:
    listed = team_app.get("/api/private").json()["models"]
    assert [(m["model_id"], m["run"], m["step"], m["n_cells"]) for m in listed] == [
        (f"private:{HOSTILE_NAME}", None, None, 1),
        (f"private:{TEAM_MODEL}", None, None, 4),
        *((f"private:{HOSTILE_NAME}@{s}", HOSTILE_NAME, s, 1) for s in (10, 20)),
        *((f"private:{RUN}@step-{s}", RUN, s, len(run_scores(s))) for s in RUN_STEPS),
    ]
    assert all(m["private"] is True for m in listed)


@pytest.mark.parametrize("path", ["/api/matrix", "/api/snapshot", "/api/versions"])
def test_the_published_snapshot_never_mentions_them(team_app: RunningApp, path: str) -> None:
    text = team_app.get(path).body.decode()
    for name in (TEAM_MODEL, RUN, "private:"):
        assert name not in text, (path, name)


def test_a_private_model_joins_the_comparison(team_app: RunningApp, bp: BenchPress) -> None:
    answer = team_app.get(
        f"/api/compare?models=gpt-5.2,private:{TEAM_MODEL}&benchmarks=gpqa_diamond,hle,humaneval"
    )
    assert answer.status == 200
    body = answer.json()
    assert [m["model_id"] for m in body["models"]] == ["gpt-5.2", f"private:{TEAM_MODEL}"]
    assert body["models"][1] == {
        "model_id": f"private:{TEAM_MODEL}",
        "name": TEAM_MODEL,
        "private": True,
        "run": None,
        "step": None,
        "added_at": body["models"][1]["added_at"],
        "n_cells": 4,
    }
    folded = cells(bp.predict(TEAM_SCORES, model=TEAM_MODEL))  # named as the CLI names it
    mine = {row["benchmark"]: row["values"][1] for row in body["rows"]}
    assert mine == {
        "gpqa_diamond": {"score": 41.5, "low": 41.5, "high": 41.5, "observed": True},
        "hle": folded["hle"],
        "humaneval": {"score": 71.0, "low": 71.0, "high": 71.0, "observed": True},
    }
    # a bare name works too (no snapshot model has it); an unknown private one is named
    bare = team_app.get(f"/api/compare?models={TEAM_MODEL}&benchmarks=hle").json()
    assert bare["models"][0]["model_id"] == f"private:{TEAM_MODEL}"
    unknown = team_app.get("/api/compare?models=private:nobody")
    assert unknown.status == 400
    assert unknown.json()["error"].startswith("no private model 'nobody'; private models: ")


def test_a_private_model_is_a_known_model(team_app: RunningApp, bp: BenchPress) -> None:
    body = team_app.get(f"/api/models/private:{TEAM_MODEL}").json()
    assert body["model"]["name"] == TEAM_MODEL and body["model"]["private"] is True
    assert [(s["benchmark_id"], s["score"], s["source"]) for s in body["scores"]] == [
        (b, TEAM_SCORES[b], "private") for b in sorted(TEAM_SCORES)
    ]
    reported = dict(bp.snapshot.benchmarks.select("benchmark_id", "n_cells").iter_rows())
    assert body["suggested_probes"] == sorted(TEAM_SCORES, key=lambda b: (-reported[b], b))
    missing = team_app.get("/api/models/private:nobody")
    assert missing.status == 404


def test_a_store_that_changes_is_seen_without_a_restart(
    team_app: RunningApp, team_home: Path, tmp_path: Path
) -> None:
    from tests.web.conftest import tidy_rows
    from warehouse.private_models import ModelImport, remove_models, save_models

    save_models([ModelImport("late-model", tidy_rows(tmp_path, "m", {"hle": 9.0}))], home=team_home)
    try:
        names = [m["name"] for m in team_app.get("/api/private").json()["models"]]
        assert "late-model" in names
    finally:
        remove_models(["late-model"], home=team_home)
    assert "late-model" not in json.dumps(team_app.get("/api/private").json())


def test_a_store_that_cannot_be_read_is_a_503_and_the_snapshot_still_serves(
    tmp_path: Path,
) -> None:
    import duckdb

    from tests.web.conftest import start_app, tidy_rows
    from warehouse.private_models import ModelImport, save_models, store_path

    home = tmp_path / "home"
    save_models([ModelImport("m", tidy_rows(tmp_path / "f", "m", {"hle": 9.0}))], home=home)
    with duckdb.connect(str(store_path(home))) as con:  # as a newer benchpress would leave it
        con.execute("INSERT INTO store_schema VALUES (99, now())")
    running = start_app(Catalog(stores=[bundled_snapshot_dir()], home=home))
    try:
        message = (
            f"the private store cannot be read: {store_path(home)} has schema version 99, "
            "newer than this benchpress knows (3); upgrade benchpress to use it"
        )
        for path in ("/api/private", "/api/runs", f"/api/runs/{RUN}", "/api/compare?models=m"):
            answer = running.get(path)
            assert (answer.status, answer.json()) == (503, {"error": message}), path
        for path in ("/api/versions", "/api/compare?models=gpt-5.2&benchmarks=hle"):
            assert running.get(path).status == 200, path
    finally:
        running.stop()


# ----------------------------------------------------------------------------- the browser
def assert_no_markup_ran(driver: Any) -> None:
    assert driver.execute_script("return window.__alerts") == []
    assert driver.find_elements("css selector", "main img") == []
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe


def run_rows(driver: Any) -> list[Any]:
    return driver.find_elements("css selector", "#run-table tbody tr")


@pytest.mark.browser
def test_the_runs_view_draws_a_run(
    team_app: RunningApp, browser: Any, bp: BenchPress, artifacts: Path
) -> None:
    open_page(browser, team_app.url + f"/?view=runs&run={RUN}")
    wait(browser, lambda d: len(run_rows(d)) == len(RUN_STEPS), "checkpoint table")
    targets = profile("general_assistant", bp.fit_benchmarks_)
    # gpqa_diamond, a probe at every checkpoint, is drawn once: as a probe, not a target
    percent = [b for b in targets if bp._scale[b] == "percent" and b != "gpqa_diamond"]
    chart = browser.find_element("css selector", "#run-chart svg.trajectory")
    lines = chart.find_elements("css selector", "g.series.target")
    assert [g.get_attribute("data-key") for g in lines] == [f"target:{b}" for b in percent]
    dots = chart.find_elements("css selector", "g.series.probe")
    assert [g.get_attribute("data-key") for g in dots] == ["probe:gpqa_diamond", "probe:hle"]
    # one band per target, one point per checkpoint on each line; mmlu_pro observed from 200
    assert len(chart.find_elements("css selector", "g.series.target polygon.band")) == len(percent)
    for line in lines:
        assert len(line.find_elements("css selector", ".point")) == len(RUN_STEPS)
    mmlu = chart.find_element("css selector", 'g.series.target[data-key="target:mmlu_pro"]')
    assert len(mmlu.find_elements("css selector", "rect.observed")) == len(RUN_STEPS) - 1

    first = run_rows(browser)[0]
    expected = bp.predict(run_scores(100), targets="general_assistant", model=RUN)
    assert first.find_element("css selector", "td.model-name").text == f"{RUN}@step-100"
    values = [
        float(td.get_attribute("data-value"))
        for td in first.find_elements("css selector", "td.predicted")
    ]
    assert values == [expected[b].score for b in targets if not expected[b].observed]
    assert f"run={RUN}" in browser.current_url
    assert f"6 checkpoints of run {RUN}" in browser.find_element("id", "run-note").text
    assert_no_markup_ran(browser)
    browser.save_screenshot(str(artifacts / "runs_view.png"))

    # another profile: the chart follows, and so does the link
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("id", "run-targets")).select_by_value("reasoning")
    # gpqa_diamond and hle, probes at every checkpoint, are not drawn again as targets
    reasoning = [
        b for b in profile("reasoning", bp.fit_benchmarks_) if b not in ("gpqa_diamond", "hle")
    ]
    wait(
        browser,
        lambda d: (
            len(d.find_elements("css selector", "#run-chart g.series.target")) == len(reasoning)
        ),
        "reasoning targets",
    )
    wait(browser, lambda d: "targets=reasoning" in d.current_url, "URL")


@pytest.mark.browser
def test_a_run_named_as_markup_renders_as_text(
    team_app: RunningApp, browser: Any, artifacts: Path
) -> None:
    open_page(browser, team_app.url + "/?view=runs")  # the first run: the hostile one
    wait(browser, lambda d: len(run_rows(d)) == 2, "checkpoint table")
    option = browser.find_element("css selector", "#run-select option:checked")
    assert option.text == f"{HOSTILE_NAME} (2 checkpoints · steps 10–20)"
    names = [r.find_element("css selector", "td.model-name").text for r in run_rows(browser)]
    assert names == [f"{HOSTILE_NAME}@10", f"{HOSTILE_NAME}@20"]
    assert HOSTILE_NAME in browser.find_element("id", "run-note").text
    assert_no_markup_ran(browser)
    browser.save_screenshot(str(artifacts / "runs_hostile.png"))


@pytest.mark.browser
def test_no_runs_shows_how_to_track_one(app: RunningApp, browser: Any, artifacts: Path) -> None:
    open_page(browser, app.url + "/?view=runs")
    empty = browser.find_element("id", "runs-empty")
    wait(browser, lambda d: empty.is_displayed(), "empty hint")
    assert browser.find_element("id", "runs-command").text == TRACK
    assert not browser.find_element("id", "run-chart").is_displayed()
    assert not browser.find_element("id", "runs-table-card").is_displayed()
    assert not browser.find_element("id", "run-controls").is_displayed()
    browser.save_screenshot(str(artifacts / "runs_empty.png"))


@pytest.mark.browser
def test_private_models_in_the_pickers(
    team_app: RunningApp, browser: Any, bp: BenchPress, artifacts: Path
) -> None:
    open_page(browser, team_app.url + "/?view=compare&models=gpt-5.2&benchmarks=gpqa_diamond,hle")
    chips = "#compare-models .chip"
    wait(browser, lambda d: len(d.find_elements("css selector", chips)) == 1, "compare")
    options = dict(
        browser.execute_script(
            "return [...document.querySelectorAll('#model-list option')]"
            ".map((o) => [o.value, o.label])"
        )
    )
    assert options[f"private:{TEAM_MODEL}"] == "private"
    assert options[f"private:{RUN}@step-600"] == f"private · run {RUN}, step 600"
    assert len(options) == len(bp.models) + 2 + 2 + len(RUN_STEPS)
    for name in (f"private:{TEAM_MODEL}", f"private:{HOSTILE_NAME}"):
        field = browser.find_element("id", "compare-model-input")
        field.send_keys(name)
        browser.find_element("id", "compare-model-add").click()
    wait(browser, lambda d: len(d.find_elements("css selector", chips)) == 3, "three models")
    labels = [
        c.find_element("css selector", "span").text
        for c in browser.find_elements("css selector", chips)
    ]
    assert labels == ["GPT-5.2", f"{TEAM_MODEL} (private)", f"{HOSTILE_NAME} (private)"]
    hle = browser.find_element("css selector", '#compare-table tr[data-benchmark="hle"]')
    cells_shown = hle.find_elements("css selector", "td.num")
    folded = bp.predict(TEAM_SCORES, model=TEAM_MODEL)["hle"].score
    assert float(cells_shown[1].get_attribute("data-value")) == folded
    assert f"private:{TEAM_MODEL}" in browser.current_url
    assert_no_markup_ran(browser)
    browser.save_screenshot(str(artifacts / "compare_private.png"))

    # the predict view's known-model picker takes one too: its scores become the probes
    open_page(browser, team_app.url + "/")
    browser.find_element("id", "model-input").send_keys(f"private:{TEAM_MODEL}")
    browser.find_element("id", "model-use").click()
    card = browser.find_element("id", "model-card")
    wait(browser, lambda d: card.is_displayed(), "model card")
    assert card.find_element("css selector", "h2").text == TEAM_MODEL
    assert "private" in card.find_element("css selector", ".chip.private").text
    wait(browser, lambda d: len(table_rows(d)) == len(bp.fit_benchmarks_), "prediction")
    assert_no_markup_ran(browser)
