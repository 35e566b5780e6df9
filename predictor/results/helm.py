"""HELM run folders (`benchmark_output/runs/<suite>/<run>/`): one model on one scenario.

A run is read from its `run_spec.json` (which model, scenario, adapter) and `stats.json`
(a list of `{name: {name, split, perturbation?}, count, sum, mean, ...}`); `scenario.json`
is optional and other files of the folder are not needed. The row of record is `stats.json`
(`primary_file`): its path and sha256 are the provenance.

- model: `adapter_spec.model` (`openai/gpt2`), else the `model=` argument of the run name as
  written; the two naming different models is an error.
- task: the run name without its model arguments, e.g.
  `commonsense:dataset=hellaswag,method=multiple_choice_joint`, `narrative_qa`: the scenario
  with the arguments that change what is measured (dataset, subject, method), so a table row
  matches exactly one setting. A HELM MMLU run covers one subject
  (`mmlu:subject=philosophy,...`): that is not MMLU, and it maps to nothing (no table row can
  cover 57 subjects; the rows stay `unmapped`).
- rows kept: the unperturbed stats of one split (`test`, else `valid`) for the score metrics in
  `SCORE_METRICS` (0-1 fractions); token counts, runtimes, calibration and the perturbed
  (robustness, fairness) copies are left out, they would be ~150 rows a run and none is a
  benchmark score. The table names each scenario's headline metric (exact_match for
  multiple-choice scenarios, f1_score for NarrativeQA); the others come out as `other_metric`.
- not run: a mean of -1 (HELM's marker) or a stat with no count.
- n: the split's `num_instances`; n_shot: `adapter_spec.max_train_instances`.
"""

from __future__ import annotations

import math
from pathlib import Path

from predictor.results.errors import ResultsError
from predictor.results.formats import ResultFormat, RunFolder
from predictor.results.frame import RawResult
from predictor.results.jsonio import load_json
from predictor.results.result_file import ResultFile

TOOL = "helm"
REQUIRED = ("run_spec.json", "stats.json")
READ_FILES = (*REQUIRED, "scenario.json")  # the files of a run folder that are read
# the files of a run folder (`benchmark_output/runs/<suite>/<run>/`)
RUN_FILES = (
    "run_spec.json",
    "stats.json",
    "scenario.json",
    "per_instance_stats.json",
    "scenario_state.json",
    "instances.json",
    "display_predictions.json",
    "display_requests.json",
)
SPLITS = ("test", "valid")  # the split scores are taken from, in order of preference
SCORE_METRICS = (
    "exact_match",
    "quasi_exact_match",
    "prefix_exact_match",
    "quasi_prefix_exact_match",
    "f1_score",
    "rouge_l",
    "bleu_1",
    "bleu_4",
)
MODEL_ARGS = ("model", "model_deployment")
NOT_RUN = -1.0
# stats of one stats.json: a run has hundreds to a few thousand (each metric per split and
# perturbation); each costs ~13 us to read (`benchmarks/reader_limits.py`)
MAX_STATS = 100_000


def is_run_file(path: Path) -> bool:
    """A file of a HELM run folder: one of its known names, with a run_spec.json beside it."""
    return path.name in RUN_FILES and (path.parent / "run_spec.json").is_file()


def primary_file(files: dict[str, ResultFile]) -> ResultFile:
    """The file whose path and sha256 a run's rows carry: `stats.json`."""
    _require(files)
    return files["stats.json"]


def read_run(files: dict[str, ResultFile]) -> list[RawResult]:
    """The rows of one run folder; `files` maps base names (`run_spec.json`, ...) to files."""
    _require(files)
    for name in READ_FILES:
        if name in files:
            FORMAT.check_size(files[name])
    spec_file, stats_file = files["run_spec.json"], files["stats.json"]
    spec = load_json(spec_file.data, spec_file.path)
    if not isinstance(spec, dict):
        raise ResultsError(spec_file.path, "run_spec.json must be a JSON object")
    if "scenario.json" in files:  # optional, but a broken one is still a broken run
        load_json(files["scenario.json"].data, files["scenario.json"].path)
    name = spec.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ResultsError(spec_file.path, "the run spec has no name", "name")
    adapter = spec.get("adapter_spec") if isinstance(spec.get("adapter_spec"), dict) else {}
    model = _model(spec_file, name, adapter)
    task = _task(name)
    shots = adapter.get("max_train_instances")
    n_shot = shots if isinstance(shots, int) and not isinstance(shots, bool) else None
    stats = _stats(stats_file, load_json(stats_file.data, stats_file.path))
    split = next((s for s in SPLITS if any(k[0] == s for k in stats)), None)
    if split is None:
        found = sorted({k[0] for k in stats})
        raise ResultsError(
            stats_file.path,
            "no unperturbed stats of the test or valid split "
            f"(splits: {', '.join(found) or 'none'})",
            hint="is this the stats.json of a finished HELM run?",
        )
    kept = [m for m in SCORE_METRICS if (split, m) in stats]
    if not kept:
        present = sorted(m for s, m in stats if s == split)
        shown = ", ".join(present[:12]) + (" ..." if len(present) > 12 else "")
        raise ResultsError(
            stats_file.path,
            f"none of the score metrics we read ({', '.join(SCORE_METRICS)}) is in the "
            f"{split} split (it has: {shown or 'nothing'})",
            hint="give this run's score as a model,benchmark,score CSV",
        )
    instances = stats.get((split, "num_instances"))
    n = int(instances) if instances is not None and instances >= 0 else None
    return [
        RawResult(
            model=model,
            task=task,
            metric=metric,
            value=stats[(split, metric)],
            unit="fraction",
            tool=TOOL,
            format=FORMAT.id,
            n=n,
            n_shot=n_shot,
            extra={"split": split, "run": name},
        )
        for metric in kept
    ]


def _require(files: dict[str, ResultFile]) -> None:
    missing = [name for name in REQUIRED if name not in files]
    if missing:
        some = next(iter(files.values()), None)
        folder = Path(some.path).parent if some else Path("HELM run")
        raise ResultsError(
            str(folder / missing[0]),
            f"the HELM run folder has no {missing[0]}",
            hint="a HELM run is read from its run_spec.json and stats.json together; "
            "name the run folder",
        )


def _model(file: ResultFile, name: str, adapter: dict) -> str:
    named = _args(name).get("model")
    model = adapter.get("model")
    if isinstance(model, str) and model.strip():
        model = model.strip()
        if named and named != model.replace("/", "_") and named != model:
            raise ResultsError(
                file.path,
                f"the run mixes two models: adapter_spec.model is {model!r}, the run name "
                f"says model={named}",
                "adapter_spec.model",
                hint="a HELM run folder holds one model's run",
            )
        return model
    if named:
        return named
    raise ResultsError(
        file.path,
        "the run spec names no model",
        "adapter_spec.model",
        hint="HELM writes the model to adapter_spec.model and model= in the run name",
    )


def _args(name: str) -> dict[str, str]:
    _, _, args = name.partition(":")
    pairs = (part.partition("=") for part in args.split(",") if part.strip())
    return {key.strip(): value.strip() for key, _, value in pairs}


def _task(name: str) -> str:
    """The run name without the arguments that only say which model ran it."""
    scenario, _, args = name.strip().partition(":")
    kept = [
        a.strip()
        for a in args.split(",")
        if a.strip() and a.partition("=")[0].strip() not in MODEL_ARGS
    ]
    return f"{scenario}:{','.join(kept)}" if kept else scenario


def _stats(file: ResultFile, doc: object) -> dict[tuple[str, str], float | None]:
    """(split, metric) -> mean of the unperturbed stats (None: not run); a metric stated twice
    with two values is an error."""
    if not isinstance(doc, list):
        raise ResultsError(file.path, "stats.json must be a JSON list of stats")
    if len(doc) > MAX_STATS:
        raise ResultsError(
            file.path,
            f"{len(doc):,} stats, over the {MAX_STATS:,} a HELM stats.json may hold",
            hint="is this the stats.json of one run?",
        )
    out: dict[tuple[str, str], float | None] = {}
    for index, stat in enumerate(doc):
        where = f"[{index}]"
        key_doc = stat.get("name") if isinstance(stat, dict) else None
        if not isinstance(key_doc, dict) or not isinstance(key_doc.get("name"), str):
            raise ResultsError(
                file.path, "each stat needs a name object with a metric name", f"{where}.name"
            )
        if "perturbation" in key_doc:
            continue
        split = key_doc.get("split")
        if not isinstance(split, str):
            raise ResultsError(file.path, "the stat names no split", f"{where}.name.split")
        metric = key_doc["name"]
        value = _mean(file, where, stat)
        key = (split, metric)
        if key in out and out[key] != value:
            raise ResultsError(
                file.path,
                f"{metric} ({split}) is stated twice with different values: {out[key]} and {value}",
                f"{where}.mean",
                hint="a run's stats.json holds one value per metric and split; is this two "
                "runs merged into one file?",
            )
        out[key] = value
    return out


def _mean(file: ResultFile, where: str, stat: dict) -> float | None:
    count, mean = stat.get("count"), stat.get("mean")
    if mean is None or count == 0:
        return None  # computed on no instance
    if isinstance(mean, bool) or not isinstance(mean, int | float):
        raise ResultsError(file.path, f"mean must be a number, got {mean!r}", f"{where}.mean")
    try:
        value = float(mean)
    except OverflowError:
        raise ResultsError(
            file.path, "the mean is too large to be a number", f"{where}.mean"
        ) from None
    if not math.isfinite(value):
        raise ResultsError(file.path, f"mean {mean!r} is not a finite number", f"{where}.mean")
    return None if value == NOT_RUN else value


# bytes per file: a stats.json holds thousands of stats (`benchmarks/reader_limits.py` times
# the largest file allowed)
FORMAT = ResultFormat(
    id="helm",
    label="HELM",
    noun="a HELM run file",
    known_as="a HELM run folder",
    max_bytes=16 * 2**20,
    run_folder=RunFolder(
        member=is_run_file,
        files=READ_FILES,
        named_alone=REQUIRED,
        read=read_run,
        primary=primary_file,
    ),
    task_map="helm",
)
