"""The plan `benchpress run` prints before any request: which task runs which probe, what
differs from how the matrix's scores were made, and what it will take.

Sizes come from the harness's task facts (`Harness.facts`: public datasets' item counts,
estimated tokens per item); a user's own task (`--task BENCHMARK=TASK`) is sized by loading
it. Time is tokens over `tokens_per_second`, an assumed throughput (default: one batched vLLM
server on one GPU, order of magnitude), so the figure is a guide to the bill, not a
promise."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from predictor.harnesses import get_harness

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

    def as_dict(self) -> dict[str, object]:
        return {
            "benchmark": self.benchmark,
            "task": self.task,
            "own_task": self.own_task,
            "differs": self.note or None,
            "items": self.items,
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
            "tasks": [t.as_dict() for t in self.tasks],
            "tokens": self.tokens,
            "seconds": self.seconds,
            "tokens_per_second": self.tokens_per_second,
            "settings": self.settings,
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
) -> PlannedTask:
    """Size one task: from the facts table, else `size_of(task)` -> (items, tokens per
    item), which loads the task."""
    facts = get_harness(harness).facts(task)
    if facts is not None:
        items, per_item, shots = facts.items, facts.tokens_per_item, facts.shots
    else:
        items, per_item = size_of(task) if size_of else (None, None)
        shots = None
    if items is not None and limit is not None:
        items = min(items, limit)
    tokens = None if items is None or per_item is None else items * per_item
    note = "your own task definition" if own else task_note(harness, task)
    return PlannedTask(benchmark, task, own, note, items, shots, tokens, done)


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


def plan_rows(plan: RunPlan) -> list[Mapping[str, object]]:
    """The plan as table rows (benchmark, task, items, shots, tokens, status)."""
    return [
        {
            "benchmark": t.benchmark,
            "task": t.task,
            "items": "?" if t.items is None else t.items,
            "shots": "" if t.shots is None else t.shots,
            "tokens": format_tokens(t.tokens) if t.tokens is not None else "?",
            "status": "done" if t.done is not None else "to run",
        }
        for t in plan.tasks
    ]
