"""The caps on untrusted results files: one entry or one byte past a cap is refused, naming the
file, the format and the limit. The caps themselves are timed by `benchmarks/reader_limits.py`;
where a file at the real cap would be large, the test lowers the cap (registering the format
with a lower `max_bytes` for the test) and builds a file one past the lowered cap."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from predictor.results import ResultsError, eee, helm, jsonio, lm_eval, paths, read_results, tidy
from predictor.results.formats import ResultFormat
from predictor.results.registry import registered

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "eval_formats"
LM_EVAL = next((FIXTURES / "lm_eval").glob("results_*.json"))
EEE = next((FIXTURES / "eee" / "records" / "hal-gaia").rglob("*.json"))
HELM_RUN = FIXTURES / "helm_raw" / "narrative_qa-model=openai_gpt2"
INSPECT = FIXTURES / "inspect" / "data_arc_qwen.json"
MIB = 2**20


@pytest.fixture
def lower_cap() -> Iterator[Callable[[ResultFormat, int], object]]:
    """`lower_cap(fmt, size)`: the format's cap is `size` bytes until the test ends."""
    with contextlib.ExitStack() as stack:
        yield lambda fmt, size: stack.enter_context(registered(replace(fmt, max_bytes=size)))


def refused(path: Path | str) -> str:
    with pytest.raises(ResultsError) as caught:
        read_results([str(path)])
    return str(caught.value)


def lm_eval_file(path: Path, tasks: int) -> Path:
    doc = json.loads(LM_EVAL.read_text())
    doc.pop("group_subtasks", None)
    doc["results"] = {f"task_{i}": {"acc,none": 0.5} for i in range(tasks)}
    path.write_text(json.dumps(doc))
    return path


def padded(path: Path, doc: dict, size: int) -> Path:
    """`doc` with a `padding` string that makes its JSON exactly `size` bytes."""
    base = len(json.dumps({**doc, "padding": ""}))
    path.write_text(json.dumps({**doc, "padding": "x" * (size - base)}))
    assert path.stat().st_size == size
    return path


def sparse(path: Path, head: bytes, size: int) -> Path:
    """A file of `size` bytes that opens with `head`: the rest is a hole, no disk is written."""
    with path.open("wb") as out:
        out.write(head)
        out.truncate(size)
    return path


# entries


def test_one_task_past_the_lm_eval_cap_is_refused(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(lm_eval, "MAX_TASKS", 3)  # the real cap, 20,000 tasks, reads in ~1 s
    assert read_results([str(lm_eval_file(tmp_path / "ok.json", 3))]).height == 3
    path = lm_eval_file(tmp_path / "results.json", 4)
    assert refused(path) == (
        f"{path}, results: 4 tasks and groups, over the 3 an lm-eval results file may hold "
        "(split the run into several results files)"
    )


def test_one_row_past_the_tidy_csv_cap_is_refused(tmp_path) -> None:
    lines = ["model,benchmark,score"] + [f"m{i},mmlu_pro,50" for i in range(tidy.MAX_ROWS + 1)]
    path = tmp_path / "scores.csv"
    path.write_text("\n".join(lines) + "\n")
    assert refused(path) == (
        f"{path}, line {tidy.MAX_ROWS + 2}: more than 50,000 rows, the limit for a "
        "model,benchmark,score table (split the table into several files)"
    )


def test_one_item_past_the_tidy_json_cap_is_refused(tmp_path) -> None:
    rows = [{"model": "m", "benchmark": "mmlu_pro", "score": 50}] * (tidy.MAX_ROWS + 1)
    path = tmp_path / "scores.json"
    path.write_text(json.dumps({"scores": rows}))
    assert refused(path) == (
        f"{path}, scores: more than 50,000 rows, the limit for a model,benchmark,score table "
        "(split the table into several files)"
    )


def test_one_result_past_the_eee_cap_is_refused(tmp_path) -> None:
    doc = json.loads(EEE.read_text())
    doc["evaluation_results"] = doc["evaluation_results"][:1] * (eee.MAX_RESULTS + 1)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(doc))
    assert refused(path) == (
        f"{path}, evaluation_results: 1,001 results, over the 1,000 an Every Eval Ever record "
        "may hold (split the record into several files)"
    )


def test_one_stat_past_the_helm_cap_is_refused(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(helm, "MAX_STATS", 5)  # the real cap, 100,000 stats, is an 11 MB file
    run = tmp_path / HELM_RUN.name
    shutil.copytree(HELM_RUN, run)
    stats = json.loads((run / "stats.json").read_text())
    (run / "stats.json").write_text(json.dumps(stats[:6]))
    assert refused(run) == (
        f"{run / 'stats.json'}: 6 stats, over the 5 a HELM stats.json may hold "
        "(is this the stats.json of one run?)"
    )


def test_one_container_past_the_json_cap_is_refused(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(jsonio, "MAX_CONTAINERS", 1000)  # the real cap is 2,000,000
    doc = json.loads(LM_EVAL.read_text())
    below = sum(json.dumps(doc).count(c) for c in "{[")
    doc["config"]["padding"] = [[]] * (1000 - below)  # and the `[` of the padding
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    assert refused(path) == (
        f"{path}: 1,001 JSON objects and lists (`{{` and `[`), over the 1,000 a results file "
        "may hold"
    )


# bytes


def test_one_byte_past_the_json_cap_is_refused_unread(tmp_path) -> None:
    # sparse: 32 MiB + 1 bytes on paper, refused from its size and opening alone
    path = sparse(tmp_path / "results.json", b'{"results": {}}', paths.MAX_JSON_BYTES + 1)
    assert refused(path) == (
        f"{path}: 33,554,433 bytes, over the 32 MiB limit for a JSON results file (only an "
        "Inspect log may be larger)"
    )


def test_one_byte_past_the_tidy_csv_cap_is_refused_unread(tmp_path) -> None:
    path = sparse(tmp_path / "scores.csv", b"model,benchmark,score\n", 8 * MIB + 1)
    assert refused(path) == (
        f"{path}: 8,388,609 bytes, over the 8 MiB limit for a model,benchmark,score table"
    )


def test_one_byte_past_the_lm_eval_cap_is_refused(tmp_path, lower_cap) -> None:
    lower_cap(lm_eval.FORMAT, MIB)  # the real cap is 32 MiB
    doc = json.loads(LM_EVAL.read_text())
    path = padded(tmp_path / "results.json", doc, MIB + 1)
    assert refused(path) == (
        f"{path}: 1,048,577 bytes, over the 1 MiB limit for an lm-eval results file"
    )
    assert read_results([str(padded(path, doc, MIB))]).height > 0


def test_one_byte_past_the_eee_cap_is_refused(tmp_path, lower_cap) -> None:
    lower_cap(eee.FORMAT, MIB)  # the real cap is 8 MiB
    path = padded(tmp_path / "record.json", json.loads(EEE.read_text()), MIB + 1)
    assert refused(path) == (
        f"{path}: 1,048,577 bytes, over the 1 MiB limit for an Every Eval Ever record"
    )


def test_one_byte_past_the_helm_cap_is_refused(tmp_path, lower_cap) -> None:
    lower_cap(helm.FORMAT, MIB)  # the real cap is 16 MiB
    run = tmp_path / HELM_RUN.name
    shutil.copytree(HELM_RUN, run)
    scenario = json.loads((run / "scenario.json").read_text())
    padded(run / "scenario.json", scenario, MIB + 1)
    assert refused(run) == (
        f"{run / 'scenario.json'}: 1,048,577 bytes, over the 1 MiB limit for a HELM run file"
    )


def test_the_helm_files_that_are_not_read_are_not_capped(tmp_path) -> None:
    run = tmp_path / HELM_RUN.name
    shutil.copytree(HELM_RUN, run)
    sparse(run / "scenario_state.json", b"[", paths.MAX_JSON_BYTES + 1)
    assert read_results([str(run)]).height > 0


def test_an_inspect_json_log_may_pass_the_json_cap() -> None:
    head = INSPECT.read_bytes()[: paths.HEAD_BYTES]
    assert paths.is_inspect_json(head)
    assert not paths.is_inspect_json(LM_EVAL.read_bytes())
    assert not paths.is_inspect_json(b'{"samples": [], "eval": {"task": "t", "model": "m"}}')


def test_a_repeated_task_is_still_refused_from_one_parse(tmp_path) -> None:
    text = LM_EVAL.read_text()
    doc = json.loads(text)
    task = next(iter(doc["results"]))
    entry = json.dumps({"exact_match,none": 0.25})
    start = re.search(r'"results":\s*\{', text).end()
    path = tmp_path / "results.json"
    path.write_text(f"{text[:start]}{json.dumps(task)}: {entry}, {text[start:]}")
    assert refused(path) == (
        f"{path}, results.{task}: task {task!r} is listed twice with different scores for "
        "'exact_match,none': 0.25 and 0.0 (was the file merged from two runs? keep one run's "
        "file)"
    )
