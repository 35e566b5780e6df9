"""A results file of a run over a seeded random subset of a task's items (`benchpress run
--items N`) dropped on the page: the probe is used, and both the answer of `POST /api/results`
and the upload card tell it apart from a full run's score."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from predictor.util.item_subsets import ItemSubset, SubsetRecord
from tests.web.conftest import RunningApp, open_page, table_rows, wait
from tests.web.test_web_results_upload import (
    GSM8K_NOTE,
    LM_EVAL,
    assert_no_markup_ran,
    choose_file,
    upload,
)

RECORD = SubsetRecord.drawn(ItemSubset(200), {"gsm8k": 1319})


def lm_eval_gsm8k_subset() -> bytes:
    """The real lm-eval file with gsm8k added as `benchpress run --items 200` writes it: 200
    of its 1,319 items scored (`n-samples`), and the record of which."""
    doc = json.loads(LM_EVAL.read_bytes())
    doc["results"]["gsm8k"] = {
        "alias": "gsm8k",
        "exact_match,strict-match": 0.4,
        "exact_match_stderr,strict-match": 0.0347,
    }
    doc["n-shot"]["gsm8k"] = 5
    doc["n-samples"]["gsm8k"] = {"original": 1319, "effective": 200}
    doc["benchpress_subset"] = RECORD.as_json()
    return json.dumps(doc, indent=2).encode()


def test_a_subset_score_is_answered_with_its_share_of_the_items(app: RunningApp) -> None:
    answer = upload(app, "results_subset.json", lm_eval_gsm8k_subset())
    assert answer.status == 200, answer.body
    assert answer.json()["probes"] == [
        {
            "benchmark": "gsm8k",
            "score": 40.0,
            "stderr": 3.47,
            "task": "gsm8k",
            "metric": "exact_match,strict-match",
            "n_shot": 5,
            "note": GSM8K_NOTE,
            "items": 200,
            "items_total": 1319,
            "subset": f"seed 0, sha256 {RECORD.sha256[:12]}",
        }
    ]


@pytest.mark.browser
def test_the_upload_card_tells_a_subset_from_a_full_run(
    app: RunningApp, browser: Any, tmp_path: Path
) -> None:
    path = tmp_path / "results_subset.json"
    path.write_bytes(lm_eval_gsm8k_subset())
    open_page(browser, app.url + "/")
    choose_file(browser, path)
    wait(browser, lambda d: len(table_rows(d)) > 1, "prediction table")
    (row,) = browser.find_elements("css selector", "#upload-probes tbody tr")
    cells = [td.text for td in row.find_elements("css selector", "td")]
    assert cells[1:3] == ["40.00 (200 of 1,319 items)", "3.47"]
    assert_no_markup_ran(browser)
