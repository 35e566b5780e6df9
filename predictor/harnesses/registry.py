"""The probe-running harnesses, by name: adding one is its module (the tool class and its
descriptor) plus one line in `HARNESSES`.

`benchpress run --harness` and `benchpress probes --runnable` offer these names, the API's
`harness=` / `runnable=` accept them, the probe sets of a snapshot are chosen for each
(`predictor.trust.probe_sets`), the probe tables get one task column per harness and the page
reads their labels from `/api/harnesses`. Names and probe-set keys are checked unique at
import, and so is a descriptor whose tool is not a `ProbeTool` named by its id.
`registered(harness)` adds one for a block (tests, trying a tool out)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from predictor.harnesses.base import Harness
from predictor.harnesses.inspect import INSPECT
from predictor.harnesses.lm_eval import LM_EVAL
from predictor.harnesses.tool import ProbeTool

HARNESSES: tuple[Harness, ...] = (
    LM_EVAL,  # the default: lm-evaluation-harness
    INSPECT,
)
DEFAULT_HARNESS = LM_EVAL.id
_added: list[Harness] = []  # `registered`


def harnesses() -> tuple[Harness, ...]:
    """Every registered harness, the built-in ones first."""
    return (*HARNESSES, *_added)


def either(words: Sequence[str], quote: bool = True) -> str:
    """`'a' or 'b'`, `'a', 'b' or 'c'`: the choices in an error message (`quote=False`: in
    a sentence, `a, b or c`)."""
    shown = [repr(w) if quote else str(w) for w in words]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def find_harness(name: str) -> Harness | None:
    """The harness `name` spells (its id, command-line name or an alias, any case)."""
    wanted = str(name).strip().lower()
    return next((h for h in harnesses() if wanted in (s.lower() for s in h.spellings)), None)


def get_harness(name: str, what: str = "harness") -> Harness:
    """The harness `name` spells; `ValueError` naming the choices (`what`: the argument)."""
    found = find_harness(name)
    if found is None:
        ids = [h.id for h in harnesses()]
        raise ValueError(f"{what} must be {either(ids)}, got {name!r}")
    return found


def task_column_names() -> list[str]:
    """The task columns of the probe tables, one per harness (`lm_eval_task`, ...)."""
    return [h.task_column for h in harnesses()]


def task_columns(
    benchmarks: Iterable[str | None], chat: bool = False
) -> dict[str, list[str | None]]:
    """One column per harness (`lm_eval_task`, `inspect_task`, ...): the task that scores each
    benchmark (None: none known); `chat`: the tasks a chat endpoint runs."""
    names = list(benchmarks)
    columns: dict[str, list[str | None]] = {}
    for harness in harnesses():
        tasks = harness.tasks(chat)
        columns[harness.task_column] = [None if b is None else tasks.get(b) for b in names]
    return columns


def check_harnesses(every: Sequence[Harness]) -> None:
    """Refuse a registry where two harnesses share a spelling or a probe-set key, or one
    lacks what the command line, the page, the probe tables or the runner need."""
    seen: dict[str, str] = {}
    for harness in every:
        if not harness.id.isidentifier() or not harness.name.strip() or not harness.label:
            raise TypeError(f"harness {harness.id!r}: needs an identifier id, a name and a label")
        if not harness.package or not harness.extra:
            raise TypeError(f"harness {harness.id!r}: needs its package and extra")
        tool = harness.tool
        if not (isinstance(tool, type) and issubclass(tool, ProbeTool)):
            raise TypeError(f"harness {harness.id!r}: its tool must be a ProbeTool class")
        if getattr(tool, "name", None) != harness.id:
            raise TypeError(f"harness {harness.id!r}: its tool {tool.__name__} is not named so")
        keys = [s.lower() for s in harness.spellings] + [k for k, _ in harness.probe_sets]
        for key in dict.fromkeys(keys):
            if key in seen:
                raise ValueError(f"harnesses {seen[key]!r} and {harness.id!r} both use {key!r}")
            seen[key] = harness.id


check_harnesses(HARNESSES)


@contextmanager
def registered(harness: Harness) -> Iterator[Harness]:
    """`harness` registered for the block, then removed again: how a test adds a harness
    without editing `HARNESSES`. A spelling or probe-set key already taken is refused."""
    check_harnesses([*harnesses(), harness])
    _added.append(harness)
    try:
        yield harness
    finally:
        _added.remove(harness)
