"""Worst cases the results readers' caps allow: time and peak memory of reading each one.

For each format, builds in a temp folder the largest file the caps allow along each axis that
costs time (entries: lm-eval tasks, tidy rows, Every Eval Ever results, HELM stats; bytes: a
file padded to its format's byte cap), reads it with `read_results([path])` in a fresh
process, and prints a table: format, axis, size, entries, seconds, peak RSS MB. The caps are
read from the readers' modules, so the table always measures the caps as they are.

`--quick` skips the Inspect log padded to its 64 MiB cap (it takes a while to write).

    .venv/bin/python benchmarks/reader_limits.py [--quick]
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from predictor.results import eee, helm, inspect_log, jsonio, lm_eval, paths, tidy

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "eval_formats"
LM_EVAL = next((FIXTURES / "lm_eval").glob("results_*.json"))
INSPECT = FIXTURES / "inspect" / "data_arc_qwen.json"
EEE = next((FIXTURES / "eee" / "records" / "hal-gaia").rglob("*.json"))
HELM = FIXTURES / "helm_raw" / "narrative_qa-model=openai_gpt2"
MIB = 2**20

CHILD = """
import resource, sys, time
from predictor.results.errors import ResultsError
from predictor.results.read import read_results
start = time.perf_counter()
try:
    outcome = f"{read_results([sys.argv[1]]).height} rows"
except ResultsError as exc:
    outcome = f"refused: {exc.problem}"[:70]
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{seconds:.2f}\\t{peak:.0f}\\t{outcome}")
"""


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _fill(limit: int, size: Callable[[int], int], low: int = 0, high: int = 1) -> int:
    """The largest n with size(n) <= limit (size grows with n)."""
    while size(high) <= limit:
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if size(middle) <= limit else (low, middle)
    return low


def _pad(doc_of: Callable[[str], object], limit: int) -> str:
    """The JSON of `doc_of(padding)` with the padding as long as `limit` bytes allow."""
    base = len(json.dumps(doc_of("")))
    return json.dumps(doc_of("x" * (limit - base)))


# lm-eval


def _lm_eval_doc(tasks: int, pad: str = "", lists: int = 0) -> dict:
    doc = json.loads(LM_EVAL.read_text())
    doc.pop("group_subtasks", None)
    doc["results"] = {
        f"task_{i}": {"alias": f"task_{i}", "acc,none": 0.5, "acc_stderr,none": 0.01}
        for i in range(tasks)
    }
    doc["n-shot"] = {f"task_{i}": 0 for i in range(tasks)}
    doc["n-samples"] = {f"task_{i}": {"original": 100, "effective": 100} for i in range(tasks)}
    doc["configs"] = {"task_0": {"description": pad, "padding": [[]] * lists}}
    return doc


def lm_eval_tasks(folder: Path) -> tuple[Path, int]:
    tasks = lm_eval.MAX_TASKS
    return _write(folder / "results_tasks.json", json.dumps(_lm_eval_doc(tasks))), tasks


def lm_eval_bytes_string(folder: Path) -> tuple[Path, int]:
    text = _pad(lambda pad: _lm_eval_doc(2, pad), paths.MAX_BYTES["lm_eval"])
    return _write(folder / "results_string.json", text), 2


def lm_eval_bytes_tasks(folder: Path) -> tuple[Path, int]:
    """As many tasks as the byte cap holds, each with a long alias (up to the task cap)."""
    tasks = lm_eval.MAX_TASKS
    per_task = paths.MAX_BYTES["lm_eval"] // tasks - 200
    doc = _lm_eval_doc(tasks)
    for name, entry in doc["results"].items():
        entry["alias"] = name + "x" * per_task
    return _write(folder / "results_long_tasks.json", json.dumps(doc)), tasks


def lm_eval_bytes_lists(folder: Path) -> tuple[Path, int]:
    """As many empty lists as the container cap allows (the most memory a byte of JSON can
    take), the rest of the byte cap a long string."""
    lists = jsonio.MAX_CONTAINERS - 200
    text = _pad(lambda pad: _lm_eval_doc(2, pad, lists), paths.MAX_BYTES["lm_eval"])
    return _write(folder / "results_lists.json", text), 2


# tidy


def tidy_csv_rows(folder: Path) -> tuple[Path, int]:
    rows = tidy.MAX_ROWS
    lines = ["model,benchmark,score"] + [f"org/model-{i},mmlu_pro,{i % 100}" for i in range(rows)]
    return _write(folder / "tidy_rows.csv", "\n".join(lines) + "\n"), rows


def tidy_csv_bytes(folder: Path) -> tuple[Path, int]:
    """The byte cap filled with as few rows as it takes: long model names."""
    rows = 1000
    width = paths.MAX_BYTES["tidy"] // rows - 30
    lines = ["model,benchmark,score"] + [
        f"{i}{'m' * width},mmlu_pro,{i % 100}" for i in range(rows)
    ]
    return _write(folder / "tidy_bytes.csv", "\n".join(lines) + "\n"), rows


def tidy_json_rows(folder: Path) -> tuple[Path, int]:
    rows = tidy.MAX_ROWS
    items = [{"model": f"org/model-{i}", "benchmark": "mmlu_pro", "score": 50} for i in range(rows)]
    return _write(folder / "tidy_rows.json", json.dumps(items)), rows


def tidy_json_bytes(folder: Path) -> tuple[Path, int]:
    rows = 1000
    width = paths.MAX_BYTES["tidy"] // rows - 80
    items = [
        {"model": f"{i}{'m' * width}", "benchmark": "mmlu_pro", "score": 50} for i in range(rows)
    ]
    return _write(folder / "tidy_bytes.json", json.dumps(items)), rows


# Every Eval Ever


def _eee_doc(results: int, pad: str = "") -> dict:
    doc = json.loads(EEE.read_text())
    item = doc["evaluation_results"][0]
    doc["evaluation_results"] = []
    for i in range(results):
        entry = copy.deepcopy(item)
        entry["evaluation_name"] = f"task {i}"
        doc["evaluation_results"].append(entry)
    doc["model_info"]["name"] = doc["model_info"]["name"] + pad
    return doc


def eee_results(folder: Path) -> tuple[Path, int]:
    results = eee.MAX_RESULTS
    return _write(folder / "eee_results.json", json.dumps(_eee_doc(results))), results


def eee_bytes(folder: Path) -> tuple[Path, int]:
    text = _pad(lambda pad: _eee_doc(2, pad), paths.MAX_BYTES["eee"])
    return _write(folder / "eee_bytes.json", text), 2


# HELM


def _helm_folder(folder: Path, stats: list[dict], scenario: str = "") -> Path:
    run = folder / HELM.name
    run.mkdir(parents=True, exist_ok=True)
    (run / "run_spec.json").write_text((HELM / "run_spec.json").read_text())
    (run / "stats.json").write_text(json.dumps(stats))
    if scenario:
        (run / "scenario.json").write_text(scenario)
    return run


def _stat(i: int, extra: str = "") -> dict:
    name = {"name": "exact_match" if i == 0 else f"metric_{i}", "split": "test"}
    if extra:
        name["sub_split"] = extra
    return {"name": name, "count": 1, "sum": 0.5, "sum_squared": 0.25, "mean": 0.5}


def helm_stats(folder: Path) -> tuple[Path, int]:
    stats = helm.MAX_STATS
    return _helm_folder(folder / "helm_stats", [_stat(i) for i in range(stats)]), stats


def helm_bytes(folder: Path) -> tuple[Path, int]:
    """stats.json at the byte cap: few stats, long names."""
    stats = 100
    width = paths.MAX_BYTES["helm"] // stats - 200
    return _helm_folder(folder / "helm_bytes", [_stat(i, "x" * width) for i in range(stats)]), stats


def helm_scenario_bytes(folder: Path) -> tuple[Path, int]:
    limit = paths.MAX_BYTES["helm"]
    scenario = _pad(lambda pad: {"name": "narrative_qa", "description": pad}, limit)
    return _helm_folder(folder / "helm_scenario", [_stat(0)], scenario), 1


# Inspect


def inspect_json_bytes(folder: Path) -> tuple[Path, int]:
    """An Inspect JSON log padded to the byte cap with samples (only the header is read)."""
    doc = json.loads(INSPECT.read_text())
    sample = doc["samples"][0]
    limit = inspect_log.MAX_JSON_LOG_BYTES
    path = folder / "inspect_log.json"
    samples = doc.pop("samples")
    head = json.dumps(doc)[:-1] + ', "samples": ['
    one = json.dumps(sample)
    count = (limit - len(head) - 2) // (len(one) + 1)
    with path.open("w", encoding="utf-8") as out:
        out.write(head)
        out.write(",".join([one] * count))
        out.write("]}")
    del samples
    return path, count


def inspect_json_small(folder: Path) -> tuple[Path, int]:
    """The fixture log as is: what reading any Inspect log costs (importing Inspect)."""
    path = folder / "inspect_small.json"
    path.write_bytes(INSPECT.read_bytes())
    return path, len(json.loads(INSPECT.read_text())["samples"])


CASES = [
    ("lm_eval", "tasks", lm_eval_tasks),
    ("lm_eval", "bytes: long string", lm_eval_bytes_string),
    ("lm_eval", "bytes: long tasks", lm_eval_bytes_tasks),
    ("lm_eval", "bytes: empty lists", lm_eval_bytes_lists),
    ("tidy", "rows (CSV)", tidy_csv_rows),
    ("tidy", "bytes (CSV)", tidy_csv_bytes),
    ("tidy", "rows (JSON)", tidy_json_rows),
    ("tidy", "bytes (JSON)", tidy_json_bytes),
    ("eee", "results", eee_results),
    ("eee", "bytes", eee_bytes),
    ("helm", "stats", helm_stats),
    ("helm", "bytes: stats.json", helm_bytes),
    ("helm", "bytes: scenario.json", helm_scenario_bytes),
    ("inspect", "small JSON log", inspect_json_small),
    ("inspect", "bytes: JSON log", inspect_json_bytes),
]


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*")) if path.is_dir() else path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 64 MiB Inspect log")
    args = parser.parse_args()
    print("format\taxis\tsize MB\tentries\tseconds\tpeak RSS MB\toutcome")
    for fmt, axis, build in CASES:
        if args.quick and build is inspect_json_bytes:
            continue
        with tempfile.TemporaryDirectory(prefix="reader-limits-") as folder:
            path, entries = build(Path(folder))
            size = _size(path)
            done = subprocess.run(
                [sys.executable, "-c", CHILD, str(path)],
                capture_output=True,
                text=True,
                check=False,
            )
            result = done.stdout.strip() or f"-\t-\tfailed: {done.stderr.strip()[-70:]}"
            print(f"{fmt}\t{axis}\t{size / 1e6:.1f}\t{entries:,}\t{result}", flush=True)


if __name__ == "__main__":
    main()
