"""The probe picker names each pick's task per harness with the labels the server gives
(`GET /api/harnesses`): a harness registered for the test shows up on the page with no
script touched (`predictor.harnesses.registered`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from predictor import BenchPress
from predictor.harnesses import registered
from predictor.util.paths import bundled_snapshot_dir
from predictor.web.catalog import Catalog
from tests.support.toy_harness import TOY
from tests.web.conftest import open_page, start_app, wait

pytestmark = pytest.mark.browser


def run_with(driver: Any) -> dict[str, str]:
    """benchmark -> the "run: ..." line of each picked probe."""
    rows = driver.find_elements("css selector", "#picker-table tbody tr.picked")
    return {
        r.get_attribute("data-benchmark"): r.find_element("css selector", ".run-with").text
        for r in rows
    }


def test_a_registered_harness_labels_the_picked_probes(browser: Any, tmp_path: Any) -> None:
    bp = BenchPress.load(store=str(bundled_snapshot_dir()))
    frame = bp.select_probes(k=2, targets="reasoning").to_frame()
    expected = frame["benchmark"].to_list()
    toy = replace(TOY, task_map={b: f"toy_{b}" for b in expected})
    with registered(toy):
        running = start_app(Catalog(stores=[bundled_snapshot_dir()], home=tmp_path))
        try:
            open_page(browser, running.url + "/?view=probes&k=2&targets=reasoning")
            wait(browser, lambda d: list(run_with(d)) == expected, "picked on load")
            shown = run_with(browser)
        finally:
            running.stop()
    for row in frame.iter_rows(named=True):
        tools = [f"lm-eval {row['lm_eval_task']}"] if row["lm_eval_task"] else []
        tools += [f"Inspect {row['inspect_task']}"] if row["inspect_task"] else []
        tools.append(f"ToyEval toy_{row['benchmark']}")
        assert shown[row["benchmark"]] == f"run: {' · '.join(tools)}"
