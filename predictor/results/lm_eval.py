"""lm-evaluation-harness `results_<timestamp>.json` (0.4.x): one row per (task or group, metric).

The file's `results` holds tasks and groups alike (`groups` repeats the groups), each with
`metric,filter` keys (`acc,none`, `exact_match,strict-match`, `pass@1,create_test`) and their
`metric_stderr,filter` twins, kept as measurement noise. Every task and group is a row: a group
score is used as a benchmark score only where the reviewed table maps the group (`mmlu`,
`leaderboard_bbh`); its subtasks stay `unmapped` and name the group they were run under.

Kept from the file: `n-samples` (effective count; a group's `sample_count`, else the sum over
its tasks), `n-shot`, `higher_is_better`, `lm_eval_version`, `date` (ISO 8601 UTC), the run's
`config.limit` (rows `limited` where it left out items: `predictor.results.limited`), a
random subset of the items (`n-samples` effective below original with no limit, e.g.
`benchpress run --items N`, whose `benchpress_subset` record says which: rows with
`items_total` and `subset`, usable, with the file's standard error or else the binomial one
for an accuracy) and the model as written (`model_name`, else the model argument of
`config.model_args`, else the model type). One derived row: where a task reports both
`prompt_level_strict_acc` and `inst_level_strict_acc`, `strict_acc_mean` is their mean, the
number the Open LLM Leaderboard v2 published as IFEval's raw value (`extra["derived_from"]`
names the two keys).

Refused with the file, the field and what to do: a `results` that is not an object of
objects, a metric that is not a number, a task listed twice with two different scores, tasks
of one file run on different models, and lm-eval 0.3 files (metric keys without a filter)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime

from predictor.results.errors import ResultsError
from predictor.results.formats import ResultFormat
from predictor.results.frame import RawResult, checked_count
from predictor.results.jsonio import repeated_objects
from predictor.results.limited import limit_text
from predictor.results.result_file import ResultFile
from predictor.util.item_subsets import (
    SUBSET_KEY,
    SubsetRecord,
    SubsetRecordError,
    fraction_stderr,
)

TOOL = "lm-evaluation-harness"
# keys beside the metrics in a task's entry (0.4.x), not metrics themselves
ENTRY_KEYS = ("alias", "name", "sample_len", "sample_count", "samples")
# keys only lm-eval's results files carry together with `results`
MARKERS = ("lm_eval_version", "versions", "n-shot", "configs", "group_subtasks", "n-samples")
NOT_COMPUTED = "N/A"
# the model argument, in the order lm-eval itself names a run's model (adapters first)
MODEL_ARGS = ("peft", "delta", "pretrained", "model", "path", "engine")
DERIVED_IFEVAL = ("strict_acc_mean", ("prompt_level_strict_acc", "inst_level_strict_acc"))
# `group_subtasks` nesting: lm-eval's groups nest a few levels (leaderboard > leaderboard_bbh >
# its tasks); each group is expanded once, a cycle or deeper nesting is a broken file
MAX_GROUP_DEPTH = 32
GROUP_HINT = "lm-eval nests a few levels; was the file edited?"
# tasks and groups in one file: a run of a whole suite is a few thousand (lm-eval knows ~12,000
# tasks in all); each costs ~50 us to read (`benchmarks/reader_limits.py`)
MAX_TASKS = 20_000

# metrics on 0-1 (accuracy-like); anything else (perplexity, bleu, bits_per_byte, mcc, ...)
# is on its own scale (`value`) and is not range-checked
FRACTION_METRICS = frozenset(
    {
        "acc",
        "acc_norm",
        "acc_mutual_info",
        "exact_match",
        "em",
        "exact",
        "f1",
        "mc1",
        "mc2",
        "mc3",
        "math_verify",
        "contains",
        "strict_acc_mean",
    }
)
FRACTION_SUFFIXES = ("_acc", "_accuracy", "_exact_match")
FRACTION_PREFIXES = ("pass@", "pass_at_", "acc_", "exact_match_")
# task families whose accuracy-like metrics lm-eval reports on 0-100
PERCENT_TASK_PREFIXES = ("squadv2", "scrolls_")
PERCENT_METRICS = frozenset(
    {
        "exact",
        "f1",
        "em",
        "HasAns_exact",
        "HasAns_f1",
        "NoAns_exact",
        "NoAns_f1",
        "best_exact",
        "best_f1",
    }
)


def looks_like(doc: object) -> bool:
    """An lm-eval results file: `results` with the harness's own companions (a malformed
    `results` is then reported as such, not as an unknown format)."""
    return (
        isinstance(doc, dict)
        and "results" in doc
        and "eval" not in doc
        and any(key in doc for key in MARKERS)
    )


def metric_unit(task: str, metric: str) -> str:
    """`fraction` for accuracy-like metrics, `percent` for the families that report them on
    0-100 (SQuAD v2, SCROLLS), else `value`."""
    if task.startswith(PERCENT_TASK_PREFIXES):
        return "percent" if metric in PERCENT_METRICS else "value"
    if (
        metric in FRACTION_METRICS
        or metric.endswith(FRACTION_SUFFIXES)
        or metric.startswith(FRACTION_PREFIXES)
    ):
        return "fraction"
    return "value"


def read(file: ResultFile, doc: object | None = None) -> list[RawResult]:
    """The rows of one results file; `doc` is the parsed JSON (`detect` parsed it once)."""
    if not isinstance(doc, dict):
        raise ResultsError(file.path, "an lm-eval results file is a JSON object")
    FORMAT.check_size(file)
    results = _objects(file, doc, "results")
    groups = _objects(file, doc, "groups") if doc.get("groups") is not None else {}
    tasks = len(results) + sum(1 for g in groups if g not in results)
    if tasks > MAX_TASKS:
        raise ResultsError(
            file.path,
            f"{tasks:,} tasks and groups, over the {MAX_TASKS:,} an lm-eval results file may hold",
            "results",
            hint="split the run into several results files",
        )
    _refuse_old_format(file, doc, results)
    _refuse_duplicate_tasks(file, results, groups)
    # lm-eval lists plain tasks too, with no subtasks
    subtasks = {g: tasks for g, tasks in _group_subtasks(file, doc).items() if tasks}
    parents = {child: group for group, children in subtasks.items() for child in children}
    model = _model(file, doc)
    context = _Context(file, doc, model, subtasks, parents)
    for group in subtasks:  # every group once: a cycle is refused even where it is not read
        context.leaves(group)
    rows: list[RawResult] = []
    names = list(results) + [g for g in groups if g not in results]
    for task in names:
        rows.extend(context.rows(task, results.get(task, groups.get(task, {}))))
    return rows


def _objects(file: ResultFile, doc: dict, key: str) -> dict[str, dict]:
    """`results` / `groups`: an object of task name -> object of metric keys."""
    value = doc.get(key)
    if not isinstance(value, dict):
        raise ResultsError(
            file.path,
            f"`{key}` must be an object of task name -> metrics",
            key,
            hint="is this a results_*.json written by lm-eval 0.4?",
        )
    for task, entry in value.items():
        if not isinstance(entry, dict):
            raise ResultsError(
                file.path,
                f"a task's entry must be an object, got {type(entry).__name__}",
                f"{key}.{task}",
            )
    return value


def _refuse_old_format(file: ResultFile, doc: dict, results: dict[str, dict]) -> None:
    """lm-eval 0.3 wrote `acc` where 0.4 writes `acc,none`: its keys are not read."""
    keys = [k for entry in results.values() for k in entry if k not in ENTRY_KEYS]
    if keys and not any("," in k for k in keys) and "lm_eval_version" not in doc:
        raise ResultsError(
            file.path,
            "an lm-eval 0.3 results file (metric keys without a filter, e.g. "
            f"{keys[0]!r} instead of '{keys[0]},none')",
            "results",
            hint="re-run with lm-eval 0.4 or later, or write the scores as a "
            "model,benchmark,score CSV",
        )


def _refuse_duplicate_tasks(
    file: ResultFile, results: dict[str, dict], groups: dict[str, dict]
) -> None:
    """A task named twice (twice in `results`, or in `results` and `groups`) with two
    different scores is a merged or edited file: which score is meant cannot be told."""
    for task, entry in groups.items():
        if task in results:
            for key, value in entry.items():
                other = results[task].get(key)
                if "," in key and other is not None and not _same(value, other):
                    raise ResultsError(
                        file.path,
                        f"task {task!r} has two different scores for {key!r}: "
                        f"{other!r} in results, {value!r} in groups",
                        f"groups.{task}.{key}",
                        hint="was the file edited or merged from two runs? keep one run's file",
                    )
    repeated = _repeated_keys(file)
    if repeated:
        task, key, first, second = repeated[0]
        raise ResultsError(
            file.path,
            f"task {task!r} is listed twice with different scores for {key!r}: "
            f"{first!r} and {second!r}",
            f"results.{task}",
            hint="was the file merged from two runs? keep one run's file",
        )


def _repeated_keys(file: ResultFile) -> list[tuple[str, str, object, object]]:
    """(task, metric key, first, second) of task entries that JSON lists twice under one
    name with different metric values (the parser keeps only the last one)."""
    found: list[tuple[str, str, object, object]] = []
    for items in repeated_objects(file.data, file.path):
        seen: dict[str, object] = {}
        for key, value in items:
            previous = seen.get(key)
            if isinstance(previous, dict) and isinstance(value, dict):
                for metric, number in value.items():
                    if "," in metric and metric in previous and not _same(previous[metric], number):
                        found.append((key, metric, previous[metric], number))
            seen[key] = value
    return found


def _same(a: object, b: object) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def _group_subtasks(file: ResultFile, doc: dict) -> dict[str, list[str]]:
    value = doc.get("group_subtasks") or {}
    if not isinstance(value, dict) or not all(
        isinstance(v, list) and all(isinstance(t, str) for t in v) for v in value.values()
    ):
        raise ResultsError(
            file.path,
            "`group_subtasks` must map each group to a list of task names",
            "group_subtasks",
        )
    return value


def _model_arg(model_args: object) -> tuple[str, str] | None:
    """(argument, model) from `config.model_args`, a string `k=v,...` or an object."""
    if isinstance(model_args, str):
        parsed = dict(part.split("=", 1) for part in model_args.split(",") if "=" in part)
    elif isinstance(model_args, dict):
        parsed = model_args
    else:
        return None
    for key in MODEL_ARGS:
        value = parsed.get(key)
        if isinstance(value, str) and value.strip():
            return key, value.strip()
    return None


def _model(file: ResultFile, doc: dict) -> str:
    """The model as the file names it; tasks run on different models are refused."""
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    from_args = _model_arg(config.get("model_args"))
    _one_model(file, doc, config)
    name = doc.get("model_name")
    if isinstance(name, str) and name.strip():
        return name.strip()
    if from_args:
        return from_args[1]
    if isinstance(config.get("model"), str) and config["model"].strip():
        return config["model"].strip()
    raise ResultsError(
        file.path,
        "the file names no model",
        "model_name",
        hint="lm-eval writes model_name and config.model_args; was the file edited?",
    )


def _one_model(file: ResultFile, doc: dict, config: dict) -> None:
    """lm-eval copies the model arguments into every task's `configs.<task>.metadata`: tasks
    naming different `pretrained` models come from different runs merged into one file."""
    seen: dict[str, str] = {}
    args = config.get("model_args")
    parsed = _model_arg(args)
    if isinstance(args, str | dict) and parsed and parsed[0] == "pretrained":
        seen[parsed[1]] = "config.model_args"
    configs = doc.get("configs") if isinstance(doc.get("configs"), dict) else {}
    for task, task_config in configs.items():
        metadata = task_config.get("metadata") if isinstance(task_config, dict) else None
        pretrained = metadata.get("pretrained") if isinstance(metadata, dict) else None
        if isinstance(pretrained, str) and pretrained.strip():
            seen.setdefault(pretrained.strip(), f"configs.{task}.metadata.pretrained")
    if len(seen) > 1:
        (first, where_first), (second, where_second) = list(seen.items())[:2]
        raise ResultsError(
            file.path,
            f"the file mixes models: {first!r} ({where_first}) and {second!r} ({where_second})",
            where_second,
            hint="a results file holds one model's run; was it merged from several runs? "
            "read each run's own results file",
        )


class _Context:
    """What every row of one file shares, and the per-task look-ups."""

    def __init__(
        self,
        file: ResultFile,
        doc: dict,
        model: str,
        subtasks: dict[str, list[str]],
        parents: dict[str, str],
    ):
        self.file, self.model, self.subtasks, self.parents = file, model, subtasks, parents
        self._leaves: dict[str, tuple[str, ...]] = {}
        self.n_samples = _mapping(doc.get("n-samples"))
        self.n_shot = _mapping(doc.get("n-shot"))
        self.higher = _mapping(doc.get("higher_is_better"))
        self.versions = _mapping(doc.get("versions"))
        version = doc.get("lm_eval_version")
        self.tool_version = version if isinstance(version, str) else None
        self.evaluated_at = _iso_time(doc.get("date"))
        config = _mapping(doc.get("config"))
        self.limit = limit_text(config.get("limit"))
        self.record = _subset_record(file, doc)

    def rows(self, task: str, entry: dict) -> list[RawResult]:
        values: dict[str, tuple[str, float | None, float | None]] = {}
        for key, raw in entry.items():
            if key in ENTRY_KEYS or "," not in key:
                continue
            metric, _, filter_name = key.partition(",")
            if metric.endswith("_stderr"):
                continue
            where = f"results.{task}.{key}"
            value = self._value(raw, where)
            stderr = self._stderr(entry.get(f"{metric}_stderr,{filter_name}"), task, key)
            values[key] = (metric, value, stderr)
        derived = self._derived(values)
        n_shot = self._shots(task)
        limited = self._limited(task)
        items_total, subset = self._subset(task)
        rows = []
        for key, (metric, value, stderr) in {**values, **derived}.items():
            n = self._count(task, key, entry)
            unit = metric_unit(task, metric)
            if items_total is not None and stderr is None:
                stderr = fraction_stderr(value, n, unit)
            filter_name = key.partition(",")[2]
            extra: dict[str, object] = {"filter": filter_name, "alias": entry.get("alias")}
            if task in self.subtasks:
                extra["is_group"] = True
            if task in self.versions:
                extra["task_version"] = self.versions[task]
            if key in derived:
                extra["derived_from"] = [f"{m},{filter_name}" for m in DERIVED_IFEVAL[1]]
            rows.append(
                RawResult(
                    model=self.model,
                    task=task,
                    metric=key,
                    value=value,
                    unit=unit,
                    tool=TOOL,
                    format=FORMAT.id,
                    tool_version=self.tool_version,
                    stderr=stderr,
                    n=n,
                    n_shot=n_shot,
                    group=self.parents.get(task),
                    evaluated_at=self.evaluated_at,
                    lower_is_better=self._lower(task, metric),
                    limit=self.limit,
                    limited=limited,
                    items_total=items_total,
                    subset=subset,
                    extra=extra,
                )
            )
        return rows

    def _limited(self, task: str) -> bool:
        """Whether the run's `config.limit` left out items of the task (of a group: of any of
        its tasks); not when `n-samples` shows every item scored (a limit above the task's
        size), nor without a limit."""
        if self.limit is None:
            return False
        for leaf in self.leaves(task):
            counts = _mapping(self.n_samples.get(leaf))
            original, effective = counts.get("original"), counts.get("effective")
            if not (_is_count(original) and _is_count(effective) and effective >= original):
                return True
        return False

    def _subset(self, task: str) -> tuple[int | None, str | None]:
        """(the task's items, which subset) when the run scored a subset of them with no
        limit: `n-samples` effective below original over the task (a group: its tasks);
        (None, None) for a full run, a limited one, or counts the file does not give."""
        if self.limit is not None:
            return None, None
        original = effective = 0
        for leaf in self.leaves(task):
            counts = _mapping(self.n_samples.get(leaf))
            if not (_is_count(counts.get("original")) and _is_count(counts.get("effective"))):
                return None, None
            original += counts["original"]
            effective += counts["effective"]
            self._check_record(leaf, counts["effective"])
        if effective >= original:
            return None, None
        if self.record is None:
            return original, "not recorded (items chosen outside benchpress)"
        return original, self.record.provenance()

    def _check_record(self, task: str, effective: int) -> None:
        """The subset record names as many items of the task as the run scored."""
        indices = None if self.record is None else self.record.indices
        if indices is None or task not in indices or len(indices[task]) == effective:
            return
        raise ResultsError(
            self.file.path,
            f"the subset record names {len(indices[task])} items of {task!r}, "
            f"but n-samples says {effective} were scored",
            f"{SUBSET_KEY}.indices.{task}",
            hint="was the file edited or merged from two runs? keep one run's file",
        )

    def _value(self, raw: object, where: str) -> float | None:
        if raw is None or raw == NOT_COMPUTED:
            return None
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise ResultsError(
                self.file.path,
                f"a metric value must be a number, got {raw!r}",
                where,
                hint="was the file edited by hand? re-export it from the run",
            )
        return float(raw)

    def _stderr(self, raw: object, task: str, key: str) -> float | None:
        """`N/A` (lm-eval skipped it, e.g. for a group) is 'none'. lm-eval writes `N/A` where
        it cannot compute one, so a NaN or infinity here is a damaged file, refused."""
        if raw is None or raw == NOT_COMPUTED:
            return None
        metric, _, filter_name = key.partition(",")
        field = f"results.{task}.{metric}_stderr,{filter_name}"
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise ResultsError(
                self.file.path, f"a standard error must be a number or 'N/A', got {raw!r}", field
            )
        if not (math.isfinite(raw) and raw >= 0):
            raise ResultsError(
                self.file.path,
                f"a standard error must be a finite number of at least 0 or 'N/A', got {raw!r}",
                field,
                hint="was the file edited by hand? re-export it from the run",
            )
        return float(raw)

    @staticmethod
    def _derived(values: dict[str, tuple[str, float | None, float | None]]) -> dict:
        """IFEval's mean of prompt- and instruction-level strict accuracy (the Open LLM
        Leaderboard's raw value): no stderr, the two are not independent."""
        name, (prompt, inst) = DERIVED_IFEVAL
        derived = {}
        for key in values:
            metric, _, filter_name = key.partition(",")
            if metric != prompt:
                continue
            other = values.get(f"{inst},{filter_name}")
            first = values[key][1]
            if other is not None and first is not None and other[1] is not None:
                derived[f"{name},{filter_name}"] = (name, (first + other[1]) / 2, None)
        return derived

    def leaves(self, task: str, chain: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The tasks under a group, each once (a task listed twice counts once); a task's
        own. Each group is expanded once, however often it is listed; `chain` is the path of
        groups down to `task`."""
        if task in self._leaves:
            return self._leaves[task]
        children = self.subtasks.get(task)
        if not children:
            return (task,)
        if task in chain:
            loop = [*chain[chain.index(task) :], task]
            raise ResultsError(
                self.file.path,
                f"group {task!r} contains itself ({' > '.join(loop)})",
                f"group_subtasks.{chain[-1]}",
                hint=GROUP_HINT,
            )
        if len(chain) >= MAX_GROUP_DEPTH:
            shown = [*chain[:2], "...", task] if len(chain) > 3 else [*chain, task]
            raise ResultsError(
                self.file.path,
                f"groups nest more than {MAX_GROUP_DEPTH} levels deep ({' > '.join(shown)})",
                f"group_subtasks.{task}",
                hint=GROUP_HINT,
            )
        below = (*chain, task)
        found = dict.fromkeys(leaf for child in children for leaf in self.leaves(child, below))
        self._leaves[task] = tuple(found)
        return self._leaves[task]

    def _count(self, task: str, key: str, entry: dict) -> int | None:
        """Samples scored: `n-samples` (effective), a group's `sample_count` for the metric,
        else the sum over the group's tasks."""
        own = self._effective(task)
        if own is not None:
            return own
        counts = entry.get("sample_count")
        if isinstance(counts, dict) and _is_count(counts.get(key)):
            return counts[key]
        if task in self.subtasks:
            leaves = [self._effective(leaf) for leaf in self.leaves(task)]
            if leaves and all(n is not None for n in leaves):
                return checked_count(sum(leaves), self.file.path, f"n-samples (group {task})")
        length = entry.get("sample_len")
        return length if _is_count(length) else None

    def _effective(self, task: str) -> int | None:
        """`n-samples.<task>.effective`: a whole number within Int64, else refused."""
        value = _mapping(self.n_samples.get(task)).get("effective")
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        return checked_count(value, self.file.path, f"n-samples.{task}.effective")

    def _shots(self, task: str) -> int | None:
        """The task's `n-shot`; a group's when all its tasks agree."""
        shots = self.n_shot.get(task)
        if _is_count(shots):
            return shots
        if task in self.subtasks:
            found = {self.n_shot.get(leaf) for leaf in self.leaves(task)}
            if len(found) == 1 and _is_count(next(iter(found))):
                return found.pop()
        return None

    def _lower(self, task: str, metric: str) -> bool | None:
        higher = _mapping(self.higher.get(task)).get(metric)
        return (not higher) if isinstance(higher, bool) else None


def _subset_record(file: ResultFile, doc: dict) -> SubsetRecord | None:
    """The file's `benchpress_subset` record (`predictor.util.item_subsets`), if any."""
    if doc.get(SUBSET_KEY) is None:
        return None
    try:
        return SubsetRecord.from_json(doc[SUBSET_KEY])
    except SubsetRecordError as exc:
        raise ResultsError(
            file.path, f"a broken subset record: {exc}", exc.field, hint=SUBSET_HINT
        ) from None


SUBSET_HINT = "benchpress run --items writes it; was the file edited? re-run the task"


def _mapping(value: object) -> Mapping:
    return value if isinstance(value, dict) else {}


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _iso_time(value: object) -> str | None:
    """lm-eval's `date` (seconds since the epoch) as ISO 8601 UTC."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    try:
        return datetime.fromtimestamp(value, tz=UTC).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return None


# bytes: KBs to a few MB, ~10-20 MB for a run of many tasks with its `configs`
# (`benchmarks/reader_limits.py` times the largest file allowed)
FORMAT = ResultFormat(
    id="lm_eval",
    label="lm-evaluation-harness",
    noun="an lm-eval results file",
    known_as="an lm-evaluation-harness results_*.json",
    max_bytes=32 * 2**20,
    read=read,
    looks_like=looks_like,
    task_map="lm_eval",
)
