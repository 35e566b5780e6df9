"""`run_probe_benchmarks`: run a model's probes with lm-eval or Inspect and read the scores
back, as `bp.predict` takes them.

    new_model_scores = run_probe_benchmarks("new-model-v1")
    predictions = bp.predict(new_model_scores)

The one-argument form runs the model of that name on the endpoint of the settings
(`BENCHPRESS_MODEL_BASE_URL`, `BENCHPRESS_MODEL_TYPE`, `BENCHPRESS_MODEL_API_KEY`, see
`predictor.runs.settings`) with the default runnable probe set of the default snapshot.

Order of work: the plan (`plan_probe_run`; nothing is sent), the checks that need no request
(the output folder is created and written to, the tool's model type and its packages), one
request to check the endpoint (no redirect followed; a deadline in all), then one task at a
time, each in a process of its own held to a deadline and, on an endpoint, a memory cap
(`predictor.runs.isolation`), each task's native file in `<out>/<task>/` as it finishes. The
key never shows: what the tools write to stdout and stderr while they run, and every failure
recorded, has it redacted (`***`).
A task that fails is recorded with its error and the others go on; the scores then come
from fewer probes (`ProbeScores.failed`). Re-running resumes: finished tasks are read, not
run. Scores of a run with `limit` are marked `limited` (a smoke test, not the model's scores)
and its files go to `<out>/limited-<N>/<task>/` (`staging.run_folder`), apart from a full
run's; `bp.predict` refuses them unless `allow_limited=True`. A run with `items` (a seeded
random subset of each task's items, `predictor.util.item_subsets`) is not a smoke test: its
files go to `<out>/items-<N>/<task>/`, record which items ran, and its scores are usable
probes, each with its standard error (`Measured`); a larger `items` later extends the same
subset.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

import polars as pl

from predictor.api import BenchPress
from predictor.harnesses import get_harness
from predictor.harnesses.endpoint import Endpoint, SettingsError
from predictor.harnesses.redact import plain_text, redact, redacted_output
from predictor.harnesses.staging import STAGING, run_folder
from predictor.results.inputs import summarise
from predictor.results.read import read_results
from predictor.runs.dataset_preflight import TaskDataset, check_datasets
from predictor.runs.isolation import (
    check_task_timeout,
    describe_task_timeout,
    run_task,
    task_deadline,
)
from predictor.runs.options import describe, split_options
from predictor.runs.plan import TOKENS_PER_SECOND, RunPlan, plan_task
from predictor.runs.preflight import check_endpoint, check_tokenizer, needs_remote_tokenizer
from predictor.runs.settings import env_task_overrides, format_model_args, resolve_endpoint
from predictor.trust.probe_sets import ProbeBenchmarks
from predictor.trust.probes import runnable_tool
from predictor.util.item_subsets import DEFAULT_SEED, ItemSubset
from predictor.util.paths import benchpress_home
from predictor.values import Measured

RUNS_DIR = "runs"  # under BENCHPRESS_HOME: a folder per model
# the tools' options benchpress sets from the endpoint: another value would send the requests
# (and the key) somewhere the plan does not show
ENDPOINT_OPTIONS = frozenset({"model", "model_args", "model_base_url"})


class ProbeScores(dict):
    """benchmark -> score of one model's probe run (what `bp.predict` takes), with where each
    score came from: `files` (benchmark -> results file), `failed` (benchmark -> error),
    `limited` (a smoke test over `limit` items per task), `subsets` (benchmark -> the items
    a subset run scored, of how many, and its standard error: such a score is a
    `Measured(score, stderr)`), `frame` (the tidy results frame, with provenance: tool,
    version, task, file, when), `plan` and `model`."""

    def __init__(
        self,
        scores: Mapping[str, float],
        *,
        model: str,
        plan: RunPlan,
        files: Mapping[str, Path],
        failed: Mapping[str, str],
        frame: pl.DataFrame,
        resumed: Sequence[str] = (),
        subsets: Mapping[str, Mapping[str, object]] | None = None,
    ) -> None:
        super().__init__(scores)
        self.model = model
        self.plan = plan
        self.files = dict(files)
        self.failed = dict(failed)
        self.frame = frame
        self.resumed = list(resumed)
        self.limited = plan.limit is not None
        # benchmark -> {"items", "items_total", "stderr", "subset"} of a subset's score
        self.subsets = {b: dict(v) for b, v in (subsets or {}).items()}

    @property
    def complete(self) -> bool:
        """Every planned probe ran."""
        return not self.failed


def default_out(model: str) -> Path:
    """`BENCHPRESS_HOME/runs/<model>`: a folder per model, its name made safe for a path."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("._") or "model"
    return benchpress_home() / RUNS_DIR / safe


def _probe_names(
    bp, probes, harness: str, chat: bool, budget_tokens: float | None = None
) -> tuple[list[str], dict[str, int]]:
    """(benchmarks, benchmark -> items of those run on a subset): the default probes are the
    snapshot's probe plan (`ProbeBenchmarks.runnable_plan`; with `budget_tokens`, the plan
    within that many tokens, `BenchPress.plan_probes`); named probes run in full."""
    if isinstance(probes, str) and probes in ("default", "runnable"):
        if budget_tokens is not None:
            try:
                plan = bp.plan_probes(harness, budget_tokens, chat=chat)
            except ValueError as error:
                raise SettingsError(f"budget_tokens: {error}") from None
            names = tuple(plan.benchmarks)
            items = {p.benchmark: p.items for p in plan.probes if p.subset}
        else:
            names, items = ProbeBenchmarks.runnable_plan(bp, harness, chat)
        if not names:
            raise SettingsError(f"snapshot {bp.version} has no benchmark {harness} can run")
        return list(names), items
    if budget_tokens is not None:
        raise SettingsError(
            "budget_tokens (--budget-tokens) plans the default probes; leave probes as "
            "'default', or name the probes and --items without a budget"
        )
    if isinstance(probes, str):
        probes = [p for p in probes.split(",") if p.strip()]
    names = [bp.resolve_benchmark(str(p).strip()) for p in probes]
    if not names:
        raise SettingsError("probes: name at least one benchmark, or 'default'")
    return list(dict.fromkeys(names)), {}


def _tasks(
    bp, names: Sequence[str], harness: str, chat: bool, own: Mapping[str, str]
) -> dict[str, tuple[str, bool]]:
    """benchmark -> (task, named by the user) for every probe; a probe without one is an
    error naming it (the user's own task definition can run it: --task BENCHMARK=TASK)."""
    own_tasks = {bp.resolve_benchmark(b): t for b, t in own.items()}
    mapped = get_harness(harness).runnable_tasks(chat)
    out: dict[str, tuple[str, bool]] = {}
    missing = []
    for name in names:
        if name in own_tasks:
            out[name] = (own_tasks[name], True)
        elif name in mapped:
            out[name] = (mapped[name], False)
        else:
            missing.append(name)
    if missing:
        kind = " generative" if chat else ""
        raise SettingsError(
            f"no{kind} {harness} task runs {', '.join(missing)}; give one with "
            f"--task BENCHMARK=TASK (and --include-path DIR for your own task definition), "
            f"or choose runnable probes (benchpress probes --runnable)"
        )
    return out


def plan_probe_run(
    model: str,
    probes: str | Sequence[str] = "default",
    harness: str = "lm_eval",
    out: str | Path | None = None,
    limit: int | None = None,
    *,
    model_type: str | None = None,
    model_args: str | Mapping[str, object] | None = None,
    tasks: Mapping[str, str] | None = None,
    include_path: str | Path | Sequence[str | Path] | None = None,
    bp=None,
    timeout: float | None = None,
    tokens_per_second: float = TOKENS_PER_SECOND,
    task_timeout: float | None = None,
    items: int | None = None,
    items_seed: int = DEFAULT_SEED,
    budget_tokens: float | None = None,
    options: Mapping[str, Any] | None = None,
    tokenizer: str | None = None,
) -> tuple[RunPlan, Endpoint, Any]:
    """The plan of a run, the endpoint it talks to and the tool; nothing is sent. The
    default probes run as the snapshot's probe plan says (each task on its items: a seeded
    subset, or all) unless `items` (one count for every task) or `limit` is given.
    `options`: the tool options passed through (`predictor.runs.options`: num_fewshot,
    batch_size, apply_chat_template, gen_kwargs), checked against the tool here."""
    tool_name = runnable_tool(harness)
    task_timeout = check_task_timeout(task_timeout)
    if limit is not None and (isinstance(limit, bool) or int(limit) < 1):
        raise SettingsError(f"limit must be a positive number of items, got {limit!r}")
    subset = _subset(items, items_seed, limit)
    if bp is None:
        bp = BenchPress.load()
    endpoint = resolve_endpoint(model, tool_name, model_type, model_args, timeout, None, tokenizer)
    passed, others = split_options(options or {})
    if others:
        raise SettingsError(
            f"options: {sorted(others)[0]} is not a run option (num_fewshot, batch_size, "
            "apply_chat_template, gen_kwargs); give the tool's own to execute_plan"
        )
    env_tasks, env_folders = env_task_overrides()
    tasks = {**env_tasks, **(tasks or {})}
    include_path = include_path if include_path is not None else env_folders
    names, plan_items = _probe_names(bp, probes, tool_name, endpoint.chat, budget_tokens)
    chosen = _tasks(bp, names, tool_name, endpoint.chat, tasks)
    # a probe plan by cost: each task of it on its own seeded subset (unless one count or a
    # smoke test is asked for)
    subsets = (
        {b: ItemSubset(n, items_seed) for b, n in plan_items.items()}
        if subset is None and limit is None
        else {}
    )
    folders = _include_paths(include_path)
    descriptor = get_harness(tool_name)
    if subset is not None and not descriptor.tool.runs_subsets:
        raise SettingsError(f"items: {descriptor.label} cannot run a subset of a task's items")
    if not descriptor.tool.runs_subsets:
        subsets = {}  # a tool that runs no subsets runs the plan's tasks in full
    if passed:
        descriptor.tool.tool_options(passed)  # one the tool cannot take: refused now
    if passed.get("apply_chat_template") and needs_remote_tokenizer(endpoint):
        # lm-eval sends the chat messages as the prompt to the server's /tokenize
        raise SettingsError(
            "--apply-chat-template: lm-eval cannot apply a chat template through the server's "
            "tokenizer (tokenizer_backend=remote); pass --tokenizer HF_NAME as well, or use "
            "--model-type local-chat-completions (its server applies the template)"
        )
    tool = descriptor.tool([t for t, _ in chosen.values()], folders)
    unknown = [t for t, own in chosen.values() if own and not tool.known(t)]
    if unknown:
        where = ", ".join(str(f) for f in folders) or f"{descriptor.label}'s own tasks"
        raise SettingsError(f"task {unknown[0]!r} is not in {where}: check --include-path")
    # a run with a limit (a smoke test) has a folder of its own: <out>/limited-<N>; so has
    # a subset run: <out>/items-<N>
    given = Path(out).expanduser() if out is not None else default_out(model)
    folder = run_folder(given, limit, subset)
    planned = [
        plan_task(
            tool_name,
            benchmark,
            task,
            own,
            limit,
            tool.size,
            _finished(
                tool,
                run_folder(folder, None, subsets[benchmark]) if benchmark in subsets else folder,
                endpoint,
                task,
                limit,
                subsets.get(benchmark, subset),
                passed,
            ),
            subsets.get(benchmark, subset),
        )
        for benchmark, (task, own) in chosen.items()
    ]
    settings = {"model_args": _shown_args(endpoint), "timeout": f"{endpoint.timeout:g} s"}
    settings["task_timeout"] = describe_task_timeout(task_timeout)
    if endpoint.base_url:
        settings["endpoint"] = f"{endpoint.base_url} ({endpoint.base_url_origin})"
    if endpoint.api_key:
        settings["api_key"] = "set (BENCHPRESS_MODEL_API_KEY)"
    if passed:
        settings["options"] = describe(passed)
    plan = RunPlan(
        model,
        tool_name,
        endpoint.model_type,
        folder,
        limit,
        planned,
        tokens_per_second,
        settings,
        task_timeout,
        subset,
        subsets,
        passed,
    )
    return plan, endpoint, tool


def _subset(items: int | None, seed: int, limit: int | None) -> ItemSubset | None:
    """The subset `items` asks for (None: every item), or `SettingsError`."""
    if items is None:
        return None
    if limit is not None:
        raise SettingsError(
            "--items and --limit (items=, limit=) cannot go together: --items runs a seeded "
            "random subset (usable probes), --limit the first items (a smoke test)"
        )
    try:
        return ItemSubset(items, seed)
    except ValueError as error:
        raise SettingsError(f"items: {error}") from None


def _finished(
    tool, folder: Path, endpoint: Endpoint, task: str, limit, subset, options=None
) -> Path | None:
    """The tool's file of an earlier run of the task (a tool that runs no subsets is never
    asked about one: `ProbeTool.runs_subsets`; a run without tool options is not asked
    about them)."""
    extra: dict[str, Any] = {"subset": subset} if subset is not None else {}
    if options:
        extra["options"] = options
    return tool.finished(folder, endpoint, task, limit, **extra)


def _shown_args(endpoint: Endpoint) -> str:
    return format_model_args(endpoint.model_args)


def _include_paths(value) -> list[Path]:
    if value is None:
        return []
    items = [value] if isinstance(value, str | Path) else list(value)
    folders = [Path(p).expanduser() for p in items]
    for folder in folders:
        if not folder.is_dir():
            raise SettingsError(f"--include-path {folder}: no such folder")
    return folders


def execute_plan(
    plan: RunPlan,
    endpoint: Endpoint,
    tool,
    options: Mapping[str, Any] | None = None,
    progress: bool = False,
    on_task: Callable[[str, str, str], None] | None = None,
) -> ProbeScores:
    """Run what the plan has still to run and read every probe's scores back.

    Each task runs in a process of its own, held to its deadline and, on an endpoint, to a
    memory cap; the key reaches only that process (`predictor.runs.isolation`).
    `on_task(benchmark, task, outcome)` is told each outcome (`done`, `failed: ...`)."""
    files: dict[str, Path] = {t.benchmark: t.done for t in plan.tasks if t.done is not None}
    resumed = list(files)
    failed: dict[str, str] = {}
    todo = plan.to_run
    options = {**plan.options, **(options or {})}
    folders = list(dict.fromkeys(plan.task_folder(t) for t in todo))
    if todo:  # everything that needs no request first: nothing is sent before it holds
        _check_options(options)
        for folder in dict.fromkeys([plan.out, *folders]):
            check_out(folder)
        tool.check_model_type(endpoint.model_type)
        check_endpoint(endpoint)
        check_tokenizer(endpoint)
        check_datasets(
            [TaskDataset(t.task, path, name) for t in todo for path, name in tool.datasets(t.task)],
            folders=tool.include_path,
        )
    key = endpoint.api_key
    bar = _overall_bar(len(todo), progress)
    try:
        with redacted_output(key):
            for item in todo:
                bar.set_postfix_str(item.task)
                deadline = task_deadline(item.tokens, plan.tokens_per_second, plan.task_timeout)
                try:
                    files[item.benchmark] = run_task(
                        tool,
                        endpoint,
                        item.task,
                        plan.task_folder(item),
                        plan.limit,
                        options,
                        deadline,
                        subset=plan.task_subset(item),
                    )
                    outcome = "done"
                except Exception as error:  # noqa: BLE001 - one task's failure must not stop the others
                    failed[item.benchmark] = _one_line(error, key)
                    outcome = f"failed: {failed[item.benchmark]}"
                bar.update(1)
                if on_task is not None:
                    on_task(item.benchmark, item.task, outcome)
    finally:
        bar.close()
        for folder in dict.fromkeys([plan.out, *folders]):
            with suppress(OSError):  # empty once every task moved its files out
                (folder / STAGING).rmdir()
    return read_back(plan, files, failed, resumed)


def _check_options(options: Mapping[str, Any]) -> None:
    taken = sorted(ENDPOINT_OPTIONS & set(options))
    if taken:
        raise SettingsError(
            f"{taken[0]}: set by benchpress from the endpoint the plan shows; give the model "
            "type and arguments (model_type, model_args) instead"
        )


def check_out(folder: Path) -> None:
    """Create the run's folder and write a file in it (then remove it), so a path that is a
    file or cannot be written fails with its name before any request is sent."""
    try:
        if folder.exists() and not folder.is_dir():
            raise SettingsError(f"--out {folder}: is a file, not a folder")
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check-"):
            pass
    except (NotADirectoryError, FileExistsError):
        raise SettingsError(f"--out {folder}: a part of the path is a file, not a folder") from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise SettingsError(f"--out {folder}: cannot write there ({reason})") from None


def read_back(
    plan: RunPlan,
    files: Mapping[str, Path],
    failed: Mapping[str, str] | None = None,
    resumed: Sequence[str] = (),
) -> ProbeScores:
    """The scores of the finished tasks' files, each read as the benchmark it probes."""
    overrides = {(_recorded_task(t.task), None): t.benchmark for t in plan.tasks if t.own_task}
    ordered = [files[t.benchmark] for t in plan.tasks if t.benchmark in files]
    frame = read_results(ordered, overrides) if ordered else _empty_frame()
    inputs = summarise(frame) if ordered else None
    scores: dict[str, float | Measured] = dict(inputs.scores) if inputs else {}
    subsets = {}
    for row in inputs.used if inputs else ():
        if row["items_total"] is None:
            continue
        benchmark = row["benchmark_id"]
        stderr = inputs.stderr.get(benchmark, row["stderr"])
        subsets[benchmark] = {
            "items": row["n"],
            "items_total": row["items_total"],
            "stderr": stderr,
            "subset": row["subset"],
        }
        if stderr is not None:
            scores[benchmark] = Measured(scores[benchmark], stderr)
    return ProbeScores(
        scores,
        model=plan.model,
        plan=plan,
        files=files,
        failed=failed or {},
        frame=frame,
        resumed=resumed,
        subsets=subsets,
    )


def _recorded_task(task: str) -> str:
    """The task name a tool records for a spec (Inspect's `file.py@name` records `name`)."""
    return task.rpartition("@")[2]


def _empty_frame() -> pl.DataFrame:
    from predictor.results.frame import result_frame  # deferred: only for a run with no file

    return result_frame([])


def _one_line(error: BaseException, key: str | None = None) -> str:
    """A task's error as one plain line, the key redacted (before the line is cut short)."""
    text = redact(plain_text(str(error)), key) or type(error).__name__
    return text[:300]


def _overall_bar(total: int, enabled: bool):
    from tqdm import tqdm  # deferred: a progress bar only when running tasks

    class Bar(tqdm):
        monitor_interval = 0  # no monitor thread: each task's process is forked from this one

    return Bar(total=total, desc="probe tasks", unit="task", disable=not enabled or not total)


def run_probe_benchmarks(
    model: str,
    probes: str | Sequence[str] = "default",
    harness: str = "lm_eval",
    out: str | Path | None = None,
    limit: int | None = None,
    *,
    model_type: str | None = None,
    model_args: str | Mapping[str, object] | None = None,
    tasks: Mapping[str, str] | None = None,
    include_path: str | Path | Sequence[str | Path] | None = None,
    bp=None,
    timeout: float | None = None,
    task_timeout: float | None = None,
    progress: bool = True,
    items: int | None = None,
    items_seed: int = DEFAULT_SEED,
    budget_tokens: float | None = None,
    tokenizer: str | None = None,
    **harness_options: Any,
) -> ProbeScores:
    """Run `model`'s probes with lm-eval (`harness="lm_eval"`), Inspect (`"inspect"`) or
    another registered harness (`predictor.harnesses`) and return its probe scores,
    benchmark -> score, as `bp.predict` takes them.

    `probes`: `"default"` (the snapshot's probe plan for the tool: benchmarks and the items each
    runs on, a seeded subset or all, chosen by expected error per token within `budget_tokens`,
    default `probe_plan.DEFAULT_BUDGET_TOKENS`; generative tasks only for a chat model type;
    subsets in `<out>/items-<N>/`) or benchmark names (run in full). `model_type` /
    `model_args`: the tool's own spelling (`local-completions`, `hf`, `vllm`, `dummy`;
    `base_url=...`), else the settings `BENCHPRESS_MODEL_TYPE` / `BENCHPRESS_MODEL_BASE_URL`;
    the key only ever from `BENCHPRESS_MODEL_API_KEY`. `tasks`: benchmark -> task of your own
    (with `include_path`, lm-eval's option). `out`: where each task's native file is written
    (default `BENCHPRESS_HOME/runs/<model>`); re-running resumes. `limit`: items per task, for a
    smoke test (the scores are marked `limited`). `items`: a seeded random subset of `items`
    items per task (`items_seed`, default 0), in `<out>/items-<N>/`: the scores are usable
    probes, each a `Measured(score, stderr)` (`ProbeScores.subsets` says how many items of how
    many); a larger `items` later extends the same subset; `items` at or above a task's size
    runs the whole task (every task: `items` overrides the plan's counts). `budget_tokens`: plan
    the default probes within this many tokens. `timeout`: seconds one request may wait for the
    server (per read; the endpoint check is held to it in all). `task_timeout`: seconds one task
    may run, in its own process, killed past it (default: 10 times the plan's estimate for it,
    at least an hour; 0: none); a task on an endpoint also has a 768 MiB memory cap.
    `harness_options` go to `lm_eval.simple_evaluate` or `inspect_ai.eval`; of them
    `num_fewshot`, `batch_size`, `apply_chat_template` and `gen_kwargs` are checked against
    the harness first (Inspect takes `gen_kwargs` as its generation settings and refuses the
    others), shown in the plan and recorded with each task's results. `tokenizer`: a Hugging
    Face tokenizer lm-eval tokenizes with, for a server without `/tokenizer_info` (llama.cpp's).
    Before the first task, each task's dataset is checked on the Hugging Face Hub
    (`predictor.runs.dataset_preflight`: gated, missing, offline and not cached)."""
    passed, others = split_options(harness_options)
    plan, endpoint, tool = plan_probe_run(
        model,
        probes,
        harness,
        out,
        limit,
        model_type=model_type,
        model_args=model_args,
        tasks=tasks,
        include_path=include_path,
        bp=bp,
        timeout=timeout,
        task_timeout=task_timeout,
        items=items,
        items_seed=items_seed,
        budget_tokens=budget_tokens,
        options=passed,
        tokenizer=tokenizer,
    )
    return execute_plan(plan, endpoint, tool, others, progress)
