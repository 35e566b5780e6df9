"""Seeded random subsets of a task's items (`benchpress run --items N`): which items run, the
record of them a results file carries, and how a subset's score is shown.

The items of a task are ranked by a keyed hash of (seed, task, position); the subset of N
items is the first N of that ranking. An item's rank depends on nothing else (not on N, not
on the other items), so:

- the same seed and task give the same items on any machine and Python version;
- a larger N extends the subset (N=150 holds the 100 items of N=100): a re-run over more
  items is a superset, never a new draw;
- N at or above the task's size is the whole task (a full run).

A group of tasks (lm-eval's `mmlu`: 57 subjects) ranks the items of all its tasks together,
then adds each task's first-ranked item when the first N left a task out: the tools run a
task of a group for which they get no items in full, and the group's score needs every
task. So a group scores at least N items, a few more when N is small against its tasks.

Unlike `--limit N` (the first N items: a smoke test, biased towards whatever the dataset
lists first), a subset is a random sample of the task: its score estimates the full run's,
with a standard error, and is used as a probe (`predictor.results` marks the rows with the
task's item count and this record's seed and digest)."""

from __future__ import annotations

import hashlib
import heapq
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

SUBSET_KEY = "benchpress_subset"  # the record's key in a results file (lm-eval; Inspect metadata)
DEFAULT_SEED = 0
FOLDER_PREFIX = "items-"  # `<out>/items-<N>[-seed-<S>]/`: a subset run's files
MAX_ITEMS = 10**8  # an item count past any task's (a record claiming more is broken)
SHOWN_DIGEST = 12  # hex characters of the digest shown in provenance


class SubsetRecordError(ValueError):
    """A results file's subset record is malformed; `field` says where."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class ItemSubset:
    """What `--items N --items-seed S` asks: N items per task, drawn with seed S."""

    items: int
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        for name, low in (("items", 1), ("seed", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be a whole number >= {low}, got {value!r}")

    @property
    def folder(self) -> str:
        """`items-100` (the default seed) or `items-100-seed-7`: the run's own folder."""
        seed = f"-seed-{self.seed}" if self.seed != DEFAULT_SEED else ""
        return f"{FOLDER_PREFIX}{self.items}{seed}"

    def describe(self) -> str:
        """`100 items per task (a seeded random subset, seed 0)`, for the plan."""
        plural = "s" if self.items != 1 else ""
        return f"{self.items} item{plural} per task (a seeded random subset, seed {self.seed})"


def _rank(seed: int, task: str, index: int) -> bytes:
    return hashlib.blake2b(f"{seed}\0{task}\0{index}".encode(), digest_size=16).digest()


def draw(subset: ItemSubset, sizes: Mapping[str, int]) -> dict[str, list[int]] | None:
    """task -> the sorted positions of its items in the subset, for a task (or the tasks of
    a group) of `sizes` items each; None when the subset is every item (a full run)."""
    sizes = {task: size for task, size in sizes.items() if size > 0}
    if subset.items >= sum(sizes.values()):
        return None
    ranked = (
        (_rank(subset.seed, task, index), task, index)
        for task, size in sizes.items()
        for index in range(size)
    )
    chosen: dict[str, set[int]] = {task: set() for task in sizes}
    for _, task, index in heapq.nsmallest(subset.items, ranked):
        chosen[task].add(index)
    if len(sizes) > 1:  # every task of a group: its first-ranked item where none was drawn
        for task, size in sizes.items():
            if not chosen[task]:
                chosen[task].add(min(range(size), key=lambda i: _rank(subset.seed, task, i)))
    return {task: sorted(indices) for task, indices in chosen.items()}


def digest(indices: Mapping[str, Sequence[int]]) -> str:
    """sha256 of the indices (task -> sorted positions) as canonical JSON."""
    text = json.dumps(
        {t: list(v) for t, v in indices.items()}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class SubsetRecord:
    """Which items a run scored: the request (seed, items), the task's item count (`total`,
    over the tasks of a group) and the positions scored (`indices`; None: every item)."""

    seed: int
    items: int
    total: int
    indices: dict[str, list[int]] | None

    @classmethod
    def drawn(cls, subset: ItemSubset, sizes: Mapping[str, int]) -> SubsetRecord:
        """The record of `subset` drawn over a task (or a group's tasks) of `sizes` items."""
        total = sum(size for size in sizes.values() if size > 0)
        return cls(subset.seed, subset.items, total, draw(subset, sizes))

    @property
    def scored(self) -> int:
        return self.total if self.indices is None else sum(map(len, self.indices.values()))

    @property
    def sha256(self) -> str | None:
        return None if self.indices is None else digest(self.indices)

    def matches(self, subset: ItemSubset) -> bool:
        """Whether this run is the subset asked for (the same seed and item count)."""
        return (self.seed, self.items) == (subset.seed, subset.items)

    def provenance(self) -> str:
        """`seed 0, sha256 1a2b3c4d5e6f`: what a results row records of the subset."""
        shown = self.sha256
        tail = f", sha256 {shown[:SHOWN_DIGEST]}" if shown else ""
        return f"seed {self.seed}{tail}"

    def as_json(self) -> dict[str, object]:
        return {
            "seed": self.seed,
            "items": self.items,
            "total": self.total,
            "scored": self.scored,
            "sha256": self.sha256,
            "indices": self.indices,
        }

    @classmethod
    def from_json(cls, value: object, where: str = SUBSET_KEY) -> SubsetRecord:
        """The record as a results file holds it; `SubsetRecordError` naming the field when
        it is malformed, or when its digest or count disagrees with its indices (an edited
        file)."""
        if not isinstance(value, dict):
            raise SubsetRecordError("the subset record must be an object", where)
        seed, items, total = (_count(value, name, where) for name in ("seed", "items", "total"))
        if items < 1:
            raise SubsetRecordError(f"items must be at least 1, got {items}", f"{where}.items")
        raw = value.get("indices")
        indices = None if raw is None else _indices(raw, total, f"{where}.indices")
        record = cls(seed, items, total, indices)
        if value.get("sha256") != record.sha256:
            raise SubsetRecordError(
                "the digest does not match the indices (was the file edited?)", f"{where}.sha256"
            )
        if value.get("scored") != record.scored:
            raise SubsetRecordError(
                f"scored says {value.get('scored')!r}, the indices hold {record.scored}",
                f"{where}.scored",
            )
        return record


def record_matches(recorded: object, subset: ItemSubset | None) -> bool:
    """Whether a results file's subset record (None: a full run) is the run asked for
    (`subset`, None for a full run); a record that does not parse matches nothing."""
    if subset is None or recorded is None:
        return subset is None and recorded is None
    try:
        return SubsetRecord.from_json(recorded).matches(subset)
    except SubsetRecordError:
        return False


def _count(value: dict, name: str, where: str) -> int:
    found = value.get(name)
    if isinstance(found, bool) or not isinstance(found, int) or not 0 <= found <= MAX_ITEMS:
        raise SubsetRecordError(
            f"{name} must be a whole number from 0 to {MAX_ITEMS:,}, got {found!r}",
            f"{where}.{name}",
        )
    return found


def _indices(raw: object, total: int, where: str) -> dict[str, list[int]]:
    if not isinstance(raw, dict):
        raise SubsetRecordError("indices must be an object of task -> positions", where)
    out: dict[str, list[int]] = {}
    for task, positions in raw.items():
        field = f"{where}.{task}"
        if not isinstance(positions, list) or not all(
            isinstance(p, int) and not isinstance(p, bool) and 0 <= p < total for p in positions
        ):
            raise SubsetRecordError(f"positions must be whole numbers from 0 to {total - 1}", field)
        if positions != sorted(set(positions)):
            raise SubsetRecordError("positions must be sorted, each once", field)
        out[task] = positions
    if sum(map(len, out.values())) > total:
        raise SubsetRecordError(f"more positions than the {total} items", where)
    return out


def items_text(scored: int, total: int) -> str:
    """`200 of 12,032 items`."""
    return f"{scored:,} of {total:,} items"


def shown_score(score: float, stderr: float | None, scored: int, total: int) -> str:
    """A subset's score as every output shows it: `74.0 ±2.1 (200 of 12,032 items)`."""
    error = f" ±{stderr:.1f}" if stderr is not None else ""
    return f"{score:.1f}{error} ({items_text(scored, total)})"


def fraction_stderr(value: float | None, n: int | None, unit: str) -> float | None:
    """The standard error of a subset's accuracy when its tool gives none: sqrt(p (1 - p) /
    n) for a `fraction` over `n` items, p kept half an item from 0 and 1 (the rule of
    `predictor.results.noise.binomial_stderr`); None for another unit or no count."""
    if value is None or not n or n < 1 or unit != "fraction":
        return None
    half = 0.5 / n
    p = min(max(value, half), 1.0 - half)
    return math.sqrt(p * (1.0 - p) / n)
