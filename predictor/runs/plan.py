"""The plan `benchpress run` prints before any request: which task runs which probe, what
differs from how the matrix's scores were made, and what it will take.

Sizes come from the harness's task facts (`Harness.facts`: public datasets' item counts,
estimated tokens per item); a user's own task (`--task BENCHMARK=TASK`) is sized by loading
it. Time is tokens over `tokens_per_second`, an assumed throughput (default: one batched vLLM
server on one GPU, order of magnitude), so the figure is a guide to the bill, not a
promise. A run over a seeded subset of the items (`--items N`) is sized at N items per task
(all of a task smaller than that), out of the task's items (`items_total`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from predictor.harnesses import get_harness
from predictor.harnesses.staging import run_folder
from predictor.util.item_subsets import ItemSubset

TOKENS_PER_SECOND = 2000.0


@dataclass(frozen=True)
class PlannedTask:
    """One probe: its task, what differs from the matrix's setup, its size, and whether an
    earlier run already finished it (`done`: that results file)."""

    benchmark: str
    task: str
    own_task: bool  # named by the user (--task), not by the reviewed maps
    note: str
    items: int | None
    shots: int | None
    tokens: int | None
    done: Path | None = None
    # a subset run (`--items`): the task's items, of which `items` run (None: unknown)
    items_total: int | None = None
    subset: bool = False

    def as_dict(self) -> dict[str, object]:
        return {
            "benchmark": self.benchmark,
            "task": self.task,
            "own_task": self.own_task,
            "differs": self.note or None,
            "items": self.items,
            "items_total": self.items_total,
            "shots": self.shots,
            "tokens": self.tokens,
            "done": None if self.done is None else str(self.done),
        }


@dataclass(frozen=True)
class RunPlan:
    model: str
    harness: str
    model_type: str
    out: Path
    limit: int | None
    tasks: list[PlannedTask]
    tokens_per_second: float = TOKENS_PER_SECOND
    settings: dict[str, str] = field(default_factory=dict)  # shown, never the key
    # seconds one task may run (0: no deadline), None: derived from the task's estimate
    # (`predictor.runs.isolation.task_deadline`)
    task_timeout: float | None = None
    subset: ItemSubset | None = None  # `--items N`: a seeded random subset of each task
    # a probe plan by cost (`predictor.trust.probe_plan`): benchmark -> the subset its task
    # runs on, each in `<out>/items-<N>/` (the tasks not in it run in full, in `out`)
    subsets: dict[str, ItemSubset] = field(default_factory=dict)
    # the tool options passed through (`predictor.runs.options`): num_fewshot, batch_size,
    # apply_chat_template, gen_kwargs; recorded with each task's results
    options: dict[str, object] = field(default_factory=dict)

    def task_subset(self, task: PlannedTask) -> ItemSubset | None:
        """The subset `task` runs on (None: all its items)."""
        return self.subset if self.subset is not None else self.subsets.get(task.benchmark)

    def task_folder(self, task: PlannedTask) -> Path:
        """Where `task`'s files go: `out`, or a plan's subset's `<out>/items-<N>/`."""
        if self.subset is None and task.benchmark in self.subsets:
            return run_folder(self.out, None, self.subsets[task.benchmark])
        return self.out

    @property
    def to_run(self) -> list[PlannedTask]:
        return [t for t in self.tasks if t.done is None]

    @property
    def tokens(self) -> int | None:
        """Estimated tokens of the tasks still to run (None when one is unknown)."""
        sizes = [t.tokens for t in self.to_run]
        return None if any(s is None for s in sizes) else sum(s or 0 for s in sizes)

    @property
    def seconds(self) -> float | None:
        tokens = self.tokens
        return None if tokens is None else tokens / self.tokens_per_second

    def as_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "harness": self.harness,
            "model_type": self.model_type,
            "out": str(self.out),
            "limit": self.limit,
            "items": None if self.subset is None else self.subset.items,
            "items_seed": None if self.subset is None else self.subset.seed,
            "task_items": {b: s.items for b, s in self.subsets.items()},
            "tasks": [t.as_dict() for t in self.tasks],
            "tokens": self.tokens,
            "seconds": self.seconds,
            "tokens_per_second": self.tokens_per_second,
            "settings": self.settings,
            "options": self.options,
        }


def task_note(harness: str, task: str) -> str:
    """What the reviewed map says differs from the matrix's scores (shots, chain of thought,
    harness), '' when it says nothing."""
    return get_harness(harness).note(task)


def plan_task(
    harness: str,
    benchmark: str,
    task: str,
    own: bool,
    limit: int | None,
    size_of=None,
    done: Path | None = None,
    subset: ItemSubset | None = None,
) -> PlannedTask:
    """Size one task: from the facts table, else `size_of(task)` -> (items, tokens per
    item), which loads the task; with `subset`, its N items (the task's if fewer)."""
    facts = get_harness(harness).facts(task)
    if facts is not None:
        items, per_item, shots = facts.items, facts.tokens_per_item, facts.shots
    else:
        items, per_item = size_of(task) if size_of else (None, None)
        shots = None
    if items is not None and limit is not None:
        items = min(items, limit)
    total = None
    if subset is not None:
        total, items = items, subset.items if items is None else min(items, subset.items)
    tokens = None if items is None or per_item is None else items * per_item
    note = "your own task definition" if own else task_note(harness, task)
    return PlannedTask(
        benchmark, task, own, note, items, shots, tokens, done, total, subset is not None
    )


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    if seconds < 90:
        return f"~{max(seconds, 1):.0f} s"
    if seconds < 5400:
        return f"~{seconds / 60:.0f} min"
    return f"~{seconds / 3600:.1f} h"


def format_tokens(tokens: int | None) -> str:
    if tokens is None:
        return "unknown"
    if tokens >= 1_000_000:
        return f"~{tokens / 1e6:.1f}M"
    if tokens >= 1000:
        return f"~{tokens / 1e3:.0f}k"
    return f"~{tokens}"


def _items(task: PlannedTask) -> object:
    """`198`, or for a subset run `100 of 198` (`100 of ?` when the task is not sized)."""
    if task.items is None:
        return "?"
    if not task.subset:
        return task.items
    return f"{task.items} of {'?' if task.items_total is None else task.items_total}"


def plan_rows(plan: RunPlan) -> list[Mapping[str, object]]:
    """The plan as table rows (benchmark, task, items, shots, tokens, status)."""
    return [
        {
            "benchmark": t.benchmark,
            "task": t.task,
            "items": _items(t),
            "shots": "" if t.shots is None else t.shots,
            "tokens": format_tokens(t.tokens) if t.tokens is not None else "?",
            "status": "done" if t.done is not None else "to run",
        }
        for t in plan.tasks
    ]
