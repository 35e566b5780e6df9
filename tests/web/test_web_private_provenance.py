"""Where a private model's scores came from, on the page: per score the tool that wrote the
file, its version, the task and metric, the file (name only) and its sha256, and when it was
evaluated; per checkpoint of a run the same, per file. Over real HTTP and in headless Chromium.

The store is a real one (`warehouse.private_models`, as `benchpress models add` and
`benchpress track` write it), filled from real tool output: the vendored lm-evaluation-harness
results file and Inspect log (tests/fixtures/eval_formats), their tasks mapped onto snapshot
benchmarks with `--map` items as a user would, plus a tidy CSV whose file name is markup."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from predictor import BenchPress
from predictor.util.paths import bundled_snapshot_dir
from predictor.web.catalog import Catalog
from tests.web.conftest import BUNDLED_VERSION, RunningApp, open_page, start_app, wait

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "eval_formats"
LM_EVAL = FIXTURES / "lm_eval" / "results_2026-01-21T03-44-18.458309.json"
INSPECT = FIXTURES / "inspect" / "data_arc_qwen.json"
LM_EVAL_MAP = ["math_rephrased_full=math_500", "math_perturbed_full=math_level_5"]
INSPECT_MAP = ["inspect_evals/arc_easy=arc_challenge"]
LM_MODEL, INSPECT_MODEL, TIDY_MODEL = "acme-lm-7b", "acme-inspect-7b", "acme-tidy-7b"
RUN = "acme-prov-run"
MARKUP_FILE = "<img src=x onerror=alert(1)>.csv"
FIELDS = ("tool", "tool_version", "format", "task", "metric", "evaluated_at", "file_sha256")
BAD_TEXT = ("undefined", "null", "NaN", "[object Object]")

LM_EVAL_SHA = hashlib.sha256(LM_EVAL.read_bytes()).hexdigest()
INSPECT_SHA = hashlib.sha256(INSPECT.read_bytes()).hexdigest()
# what the files themselves say (read by hand from the vendored files)
LM_EVAL_FACTS = {
    "format": "lm_eval",
    "tool": "lm-evaluation-harness",
    "tool_version": "0.4.9.2",
    "evaluated_at": "2026-01-21T02:59:43+00:00",
    "file": LM_EVAL.name,
    "file_sha256": LM_EVAL_SHA,
}
INSPECT_FACTS = {
    "format": "inspect",
    "tool": "inspect_ai",
    "tool_version": "0.3.138.dev45+g23fb0e7e",
    "evaluated_at": "2025-10-20T23:12:03+00:00",
    "file": INSPECT.name,
    "file_sha256": INSPECT_SHA,
}
EXPECTED = {  # model -> benchmark -> provenance the answer must carry
    LM_MODEL: {
        "math_500": {**LM_EVAL_FACTS, "task": "math_rephrased_full", "metric": "exact_match,none"},
        "math_level_5": {
            **LM_EVAL_FACTS,
            "task": "math_perturbed_full",
            "metric": "exact_match,none",
        },
    },
    INSPECT_MODEL: {
        "arc_challenge": {
            **INSPECT_FACTS,
            "task": "inspect_evals/arc_easy",
            "metric": "choice/accuracy",
        }
    },
}


# the vendored lm-eval file's two scores are near 0 (0.04 and 0 percent): the trajectory's
# predictions warn, as `BenchPress.predict` does for scores that look like fractions
pytestmark = pytest.mark.filterwarnings("ignore::predictor.api.FractionScoresWarning")


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())


@pytest.fixture(scope="module")
def prov_home(tmp_path_factory: pytest.TempPathFactory, bp: BenchPress) -> Path:
    """A home whose store holds a model read from the lm-eval file, one from the Inspect log,
    one from a tidy CSV named as markup, and run RUN: step 100 the lm-eval file, step 200 the
    Inspect log (each copied into a checkpoint folder, as `track --from` would find them)."""
    from warehouse.private_models import ModelImport, save_models

    root = tmp_path_factory.mktemp("provenance")
    files = root / "files"
    lm_eval = files / "ckpts" / "step-100" / LM_EVAL.name
    inspect = files / "ckpts" / "step-200" / INSPECT.name
    for source, target in ((LM_EVAL, lm_eval), (INSPECT, inspect)):
        target.parent.mkdir(parents=True)
        shutil.copyfile(source, target)
    tidy = files / "tidy" / MARKUP_FILE
    tidy.parent.mkdir(parents=True)
    tidy.write_text("model,benchmark,score\nacme,gpqa_diamond,41.5\n", encoding="utf-8")

    lm_rows = bp.read_results([str(lm_eval)], overrides=LM_EVAL_MAP)
    inspect_rows = bp.read_results([str(inspect)], overrides=INSPECT_MAP)
    version = bp.version
    save_models(
        [
            ModelImport(LM_MODEL, lm_rows, snapshot_version=version),
            ModelImport(INSPECT_MODEL, inspect_rows, snapshot_version=version),
            ModelImport(TIDY_MODEL, bp.read_results([str(tidy)]), snapshot_version=version),
            ModelImport(f"{RUN}@step-100", lm_rows, run=RUN, step=100, snapshot_version=version),
            ModelImport(
                f"{RUN}@step-200", inspect_rows, run=RUN, step=200, snapshot_version=version
            ),
        ],
        home=root / "home",
        allow_limited=True,  # the real Inspect log ran 3 samples (`eval.config.limit`)
    )
    return root / "home"


@pytest.fixture(scope="module")
def prov_app(prov_home: Path) -> Iterator[RunningApp]:
    running = start_app(Catalog(stores=[bundled_snapshot_dir()], home=prov_home))
    try:
        yield running
    finally:
        running.stop()


def stored(name: str, home: Path) -> dict[str, dict[str, Any]]:
    """benchmark -> the store's own provenance columns of a model's mapped cells."""
    from warehouse.private_models import model_cells

    cells = model_cells(name, home).filter(pl.col("status") == "mapped")
    return {
        row["benchmark_id"]: {**{k: row[k] for k in FIELDS}, "file": Path(row["file"]).name}
        for row in cells.to_dicts()
    }


# --------------------------------------------------------------------------------- the API
@pytest.mark.parametrize("name", [LM_MODEL, INSPECT_MODEL])
def test_a_private_models_scores_carry_their_provenance(
    prov_app: RunningApp, prov_home: Path, name: str
) -> None:
    answer = prov_app.get(f"/api/models/private:{name}")
    assert answer.status == 200
    body = answer.json()
    added = body["model"]["added_at"]
    got = {s["benchmark_id"]: {k: s[k] for k in (*FIELDS, "file")} for s in body["scores"]}
    assert got == EXPECTED[name] == stored(name, prov_home)
    for score in body["scores"]:  # the fields a snapshot model's scores have, as before
        assert (score["source"], score["url"], score["fetched_at"]) == ("private", None, added)
    # the file by its name only: where it lay on the machine that stored it stays there
    assert str(prov_home.parent) not in answer.body.decode()


def test_a_file_without_tool_version_or_date_says_so_with_nulls(
    prov_app: RunningApp, prov_home: Path
) -> None:
    (score,) = prov_app.get(f"/api/models/private:{TIDY_MODEL}").json()["scores"]
    assert {k: score[k] for k in (*FIELDS, "file")} == stored(TIDY_MODEL, prov_home)["gpqa_diamond"]
    assert score["file"] == MARKUP_FILE
    assert (score["tool_version"], score["evaluated_at"]) == (None, None)
    assert score["task"] == "gpqa_diamond" and score["format"] == "tidy"


def test_each_checkpoint_of_a_run_carries_its_provenance(
    prov_app: RunningApp, prov_home: Path
) -> None:
    answer = prov_app.get(f"/api/runs/{RUN}")
    assert answer.status == 200
    first, second = answer.json()["checkpoints"]
    assert (first["step"], second["step"]) == (100, 200)
    assert first["provenance"] == EXPECTED[LM_MODEL] == stored(f"{RUN}@step-100", prov_home)
    assert second["provenance"] == EXPECTED[INSPECT_MODEL]
    assert first["sources"] == [
        {
            **{k: LM_EVAL_FACTS[k] for k in ("file", "file_sha256", "format", "tool")},
            "tool_version": "0.4.9.2",
            "evaluated_at": LM_EVAL_FACTS["evaluated_at"],
            "tasks": ["math_rephrased_full", "math_perturbed_full"],  # math_500, math_level_5
            "benchmarks": ["math_500", "math_level_5"],
        }
    ]
    assert second["sources"] == [
        {
            **INSPECT_FACTS,
            "tasks": ["inspect_evals/arc_easy"],
            "benchmarks": ["arc_challenge"],
        }
    ]
    assert str(prov_home.parent) not in answer.body.decode()


def test_file_names_keep_no_folders() -> None:
    from predictor.web.private import file_name

    assert file_name("/home/me/ckpts/step-1/results.json") == "results.json"
    assert file_name("ckpts\\step-1\\results.json") == "results.json"
    assert file_name("results.json") == "results.json"
    assert file_name(None) is None


# ----------------------------------------------------------------------------- the browser
def assert_clean(driver: Any, node: Any) -> None:
    """No markup ran, no script error, and no missing value printed as text."""
    assert driver.execute_script("return window.__alerts") == []
    assert driver.find_elements("css selector", "main img") == []
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe
    text = node.text
    titles = driver.execute_script(
        "return [...arguments[0].querySelectorAll('[title]')].map((n) => n.title).join(' ')",
        node,
    )
    for bad in BAD_TEXT:
        assert bad not in text, (bad, text)
        assert bad not in titles, (bad, titles)


def open_model(driver: Any, app: RunningApp, name: str) -> Any:
    open_page(driver, app.url + "/")
    driver.find_element("id", "model-input").send_keys(f"private:{name}")
    driver.find_element("id", "model-use").click()
    card = driver.find_element("id", "model-card")
    wait(driver, lambda d: card.is_displayed() and card.find_elements("css selector", "h2"), "card")
    wait(driver, lambda d: card.find_element("css selector", "h2").text == name, "model card")
    return card


def provenance_row(card: Any, benchmark: str) -> dict[str, Any]:
    row = card.find_element(
        "css selector", f'.private-provenance tbody tr[data-benchmark="{benchmark}"]'
    )
    return {
        "tool": row.find_element("css selector", "td.prov-tool"),
        "task": row.find_element("css selector", "td.prov-task"),
        "file": row.find_element("css selector", "td.prov-file .file-name"),
        "sha": row.find_element("css selector", "td.prov-file .sha"),
        "when": row.find_element("css selector", "td.prov-when"),
    }


@pytest.mark.browser
def test_the_page_shows_where_a_private_models_scores_came_from(
    prov_app: RunningApp, browser: Any, artifacts: Path
) -> None:
    card = open_model(browser, prov_app, LM_MODEL)
    heads = [th.text for th in card.find_elements("css selector", ".private-provenance th")]
    assert heads == [
        "Probe",
        "Benchmark",
        "Score",
        "Tool",
        "Task (metric)",
        "File · sha256",
        "Evaluated",
    ]
    about = card.find_element("css selector", ".card-head p").text
    assert "from lm-evaluation-harness 0.4.9.2 (1 file)" in about
    row = provenance_row(card, "math_500")
    assert row["tool"].text.split("\n") == ["lm-evaluation-harness", "0.4.9.2"]
    assert row["tool"].get_attribute("title") == "lm-evaluation-harness"
    assert row["task"].text.split("\n") == ["math_rephrased_full", "exact_match,none"]
    assert row["file"].text == LM_EVAL.name
    assert (row["sha"].text, row["sha"].get_attribute("title")) == (LM_EVAL_SHA[:12], LM_EVAL_SHA)
    when = row["when"].find_element("css selector", "span")
    assert (when.text, when.get_attribute("title")) == ("2026-01-21", "2026-01-21T02:59:43+00:00")
    assert_clean(browser, card)
    browser.save_screenshot(str(artifacts / "private_provenance_lm_eval.png"))

    card = open_model(browser, prov_app, INSPECT_MODEL)
    row = provenance_row(card, "arc_challenge")
    assert row["tool"].text.split("\n") == ["Inspect", "0.3.138.dev45+g23fb0e7e"]
    assert row["task"].text.split("\n") == ["inspect_evals/arc_easy", "choice/accuracy"]
    assert row["file"].text == INSPECT.name
    assert row["when"].text == "2025-10-20"
    assert_clean(browser, card)

    # a tidy table: no version, no date in the file (the date it was stored instead), and a
    # file name that is markup stays text
    card = open_model(browser, prov_app, TIDY_MODEL)
    row = provenance_row(card, "gpqa_diamond")
    assert row["tool"].text == "model,benchmark,score table"
    assert row["file"].text == MARKUP_FILE
    assert row["when"].text.startswith("stored 20")
    assert_clean(browser, card)
    browser.save_screenshot(str(artifacts / "private_provenance_tidy.png"))


@pytest.mark.browser
def test_the_runs_view_shows_where_each_checkpoints_scores_came_from(
    prov_app: RunningApp, browser: Any, artifacts: Path
) -> None:
    open_page(browser, prov_app.url + f"/?view=runs&run={RUN}")
    rows = "#run-table tbody tr"
    wait(browser, lambda d: len(d.find_elements("css selector", rows)) == 2, "checkpoints")
    heads = [th.text for th in browser.find_elements("css selector", "#run-table thead th")]
    assert heads[:3] == ["Step", "Checkpoint", "Scores from"]
    first, second = browser.find_elements("css selector", rows)
    source = first.find_element("css selector", "td.run-sources .run-source")
    assert source.text.split("\n") == [
        "lm-evaluation-harness 0.4.9.2",
        "math_rephrased_full, math_perturbed_full",
        "evaluated 2026-01-21",
    ]
    assert source.get_attribute("title") == f"{LM_EVAL.name} · sha256 {LM_EVAL_SHA}"
    source = second.find_element("css selector", "td.run-sources .run-source")
    assert source.text.split("\n") == [
        "Inspect 0.3.138.dev45+g23fb0e7e",
        "inspect_evals/arc_easy",
        "evaluated 2025-10-20",
    ]
    # an observed score says where it came from on hover
    observed = [
        td.get_attribute("title")
        for td in second.find_elements("css selector", "td.observed")
        if (td.get_attribute("title") or "").startswith("from ")
    ]
    assert observed == [
        "from inspect_evals/arc_easy (choice/accuracy) · Inspect 0.3.138.dev45+g23fb0e7e"
    ]
    table = browser.find_element("id", "run-table")
    assert_clean(browser, table)
    browser.execute_script("arguments[0].scrollIntoView()", table)
    browser.save_screenshot(str(artifacts / "runs_provenance.png"))
