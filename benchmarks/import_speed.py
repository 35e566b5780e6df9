"""Reading results files and predicting from them: the time for 1,000 files (by default).

Writes a realistic mix of results files to a temporary folder: lm-evaluation-harness
`results_*.json` derived from the vendored real one (the tasks the map tables put on probe
benchmarks, with an lm-eval group's unmapped subtasks beside them), Every Eval Ever records
copied from the fixtures (each under a model id of its own), and tidy
`model,benchmark,score` CSVs. Then times `BenchPress.read_results` over the folder and one
`BenchPress.predict` per model (its rows of the frame), after the snapshot is loaded. The
last line is the total: reading every file and predicting for every model.

    python benchmarks/import_speed.py [--files 1000] [--keep DIR] [--out speed.json]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

import polars as pl  # noqa: E402

from predictor import BenchPress  # noqa: E402
from predictor.results import load_map  # noqa: E402
from predictor.results.frame import MAPPED  # noqa: E402

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "eval_formats"
LM_EVAL_FILE = FIXTURES / "lm_eval" / "results_2026-01-21T03-44-18.458309.json"
EEE_RECORDS = FIXTURES / "eee" / "records"
MIX = {"lm_eval": 0.5, "eee": 0.25, "tidy": 0.25}  # share of the files
SUBTASKS = 8  # unmapped subtasks of a group in each lm-eval file, as `mmlu` runs write them


def lm_eval_tasks(fitted: set[str]) -> list[tuple[str, str, str]]:
    """(task, metric key, benchmark): one task per fitted benchmark the lm-eval map table
    puts a task on (a run scores each benchmark once)."""
    tasks: dict[str, tuple[str, str, str]] = {}
    for task, entries in load_map("lm_eval").items():
        for entry in entries:
            if entry.benchmark_id in fitted and entry.transform == "":
                metric = "acc,none" if entry.metric == "*" else entry.metric
                tasks.setdefault(entry.benchmark_id, (task, metric, entry.benchmark_id))
    return list(tasks.values())


def lm_eval_file(template: dict, model: str, tasks: list, rng: random.Random) -> dict:
    """The real results file with another model and other tasks (values as lm-eval writes
    them: fractions, `<metric>_stderr,<filter>`, n-shot, n-samples, one group)."""
    doc = copy.deepcopy(template)
    config = next(iter(template["configs"].values()))
    for key in ("results", "configs", "versions", "n-shot", "higher_is_better", "n-samples"):
        doc[key] = {}
    doc["group_subtasks"] = {}
    chosen = rng.sample(tasks, k=min(len(tasks), rng.randint(2, 4)))
    group = "mmlu_like"
    subtasks = [f"{group}_subject_{k}" for k in range(SUBTASKS)]
    named = [(t, m) for t, m, _ in chosen] + [(s, "acc,none") for s in subtasks]
    for task, metric in named:
        name, _, filt = metric.partition(",")
        value = round(rng.uniform(0.25, 0.85), 4)
        doc["results"][task] = {
            "alias": task,
            metric: value,
            f"{name}_stderr,{filt}": round(rng.uniform(0.005, 0.02), 4),
        }
        metadata = {**config["metadata"], "pretrained": model}
        doc["configs"][task] = {**config, "task": task, "num_fewshot": 0, "metadata": metadata}
        doc["versions"][task] = 1.0
        doc["n-shot"][task] = 0
        doc["higher_is_better"][task] = {name: True}
        doc["n-samples"][task] = {"original": 1000, "effective": 1000}
    doc["results"][group] = {"alias": group}
    doc["group_subtasks"] = {group: subtasks, **{t: [] for t, _, _ in chosen}}
    doc["model_name"] = model
    doc["model_name_sanitized"] = model.replace("/", "__")
    doc["config"] = {**template["config"], "model_args": f"pretrained={model}"}
    return doc


def eee_record(path: Path, k: int) -> dict:
    """A fixture record under a model id of its own (one copy = one more model)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    info = doc["model_info"]
    info["id"] = f"{info['id']}-copy{k}"
    info["name"] = f"{info['name']}-copy{k}"
    return doc


def tidy_csv(model: str, benchmarks: list[str], rng: random.Random) -> str:
    chosen = rng.sample(benchmarks, k=rng.randint(2, 5))
    rows = [f"{model},{b},{rng.uniform(20, 85):.1f}" for b in chosen]
    return "model,benchmark,score\n" + "\n".join(rows) + "\n"


def write_files(folder: Path, count: int, bp: BenchPress, seed: int = 0) -> dict[str, int]:
    """`count` results files in `folder`, in the `MIX` shares; returns files per format."""
    rng = random.Random(seed)
    fitted = set(bp.fit_benchmarks_)
    template = json.loads(LM_EVAL_FILE.read_text(encoding="utf-8"))
    tasks = lm_eval_tasks(fitted)
    records = sorted(EEE_RECORDS.rglob("*.json"))
    percent = [b for b in bp.fit_benchmarks_ if bp._scale[b] == "percent"]
    counts = {fmt: round(count * share) for fmt, share in MIX.items()}
    counts["tidy"] = count - counts["lm_eval"] - counts["eee"]
    if not tasks:  # no lm-eval map table yet: its share goes to the tidy tables
        counts["tidy"] += counts.pop("lm_eval")
    for k in range(counts.get("lm_eval", 0)):
        doc = lm_eval_file(template, f"team/model-{k:04d}", tasks, rng)
        path = folder / "lm_eval" / f"model-{k:04d}" / "results_2026-01-21T03-44-18.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    (folder / "eee").mkdir(parents=True, exist_ok=True)
    for k in range(counts["eee"]):
        doc = eee_record(records[k % len(records)], k)
        (folder / "eee" / f"record-{k:04d}.json").write_text(json.dumps(doc), encoding="utf-8")
    (folder / "tidy").mkdir(parents=True, exist_ok=True)
    for k in range(counts["tidy"]):
        text = tidy_csv(f"tidy-model-{k:04d}", percent, rng)
        (folder / "tidy" / f"scores-{k:04d}.csv").write_text(text, encoding="utf-8")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000, help="results files to write")
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    bp = BenchPress.load()
    load_s = time.perf_counter() - start
    folder = args.keep or Path(tempfile.mkdtemp(prefix="benchpress-import-speed-"))
    try:
        counts = write_files(folder, args.files, bp)
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())

        start, cpu = time.perf_counter(), time.process_time()
        frame = bp.read_results(folder)
        read_s, read_cpu = time.perf_counter() - start, time.process_time() - cpu

        start, cpu = time.perf_counter(), time.process_time()
        usable = frame.filter(pl.col("status") == MAPPED)["model"].unique().to_list()
        parts = frame.filter(pl.col("model").is_in(usable)).partition_by("model", as_dict=True)
        predictions = {model: bp.predict(rows) for (model,), rows in parts.items()}
        predict_s, predict_cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)

    files = sum(counts.values())
    total_s = read_s + predict_s
    models = frame["model"].n_unique()
    mix = ", ".join(f"{n:,} {fmt}" for fmt, n in counts.items())
    predicted = max(len(predictions), 1)
    print(f"snapshot {bp.version} loaded in {load_s:.2f} s (not counted below)")
    print(f"wrote {files:,} results files ({mix}; {size / 1e6:.1f} MB)")
    print(
        f"  read_results  {read_s:6.2f} s (cpu {read_cpu:5.2f} s)  {files / read_s:6.0f} files/s"
        f"   {frame.height:,} rows, {models:,} models"
    )
    print(
        f"  predict       {predict_s:6.2f} s (cpu {predict_cpu:5.2f} s)  "
        f"{1000 * predict_s / predicted:6.2f} ms per model ({len(predictions):,} with a usable "
        f"score), {1000 * predict_s / files:.2f} ms per file"
    )
    print(
        f"{files:,} files read and predicted: {total_s:.2f} s (cpu {read_cpu + predict_cpu:.2f} s)"
    )
    if args.out:
        figures = {
            "files": counts,
            "bytes": size,
            "rows": frame.height,
            "models": models,
            "predicted_models": len(predictions),
            "load_s": load_s,
            "read_s": read_s,
            "predict_s": predict_s,
            "read_cpu_s": read_cpu,
            "predict_cpu_s": predict_cpu,
            "total_s": total_s,
            "files_per_s": files / read_s,
            "predict_ms_per_file": 1000 * predict_s / files,
        }
        Path(args.out).write_text(json.dumps(figures, indent=2) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
