"""Checkpoint tracking, the pure part: which step a file belongs to, what `--require` asks
for, and how likely a checkpoint meets it (from `BenchPress.predictive_draws`). Storing the
checkpoints as private models is `warehouse.private_models`; the plot is `predictor.tracking.plot`.

A fine-tuning run is evaluated every N steps; each evaluation writes results files under a
folder naming the step (`ckpts/step-500/results_*.json`, `checkpoint-1000/`,
`global_step1500/`). The step is read from the path: by default the integer right after
`step`, `steps`, `ckpt`, `checkpoint`, `global_step` or `iter` (a separator `-`, `_` or `=`
may come between), else from a user regex with one capturing group (`--step-from`). A user's
regex runs on RE2 (`google-re2`), in time linear in the path: a pattern such as `(?:a+)+x`
cannot backtrack for hours; RE2 has no lookaround or backreferences, so those are refused.
Only the built-in default pattern (ours, with lookbehind) runs on Python's `re`.

Criteria (`mmlu_pro>=70,gpqa_diamond>=45`) are judged on joint predictive draws of a
checkpoint's scores: P(all hold) is the fraction of draws in which every criterion holds, so
benchmarks that move together are not treated as independent (a product of marginals). A
criterion on a benchmark the checkpoint was scored on is judged on that score as a
measurement (`with_measurement_noise`: score +- its standard error, else the benchmark's
default noise), so 69.5 against `>=70` is not a certain miss.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

MEET_PROBABILITY = 0.9  # "first checkpoint where P(all criteria) >= 0.9"
STEP_WORDS = ("global_step", "checkpoint", "steps", "step", "ckpt", "iter")
DEFAULT_STEP_PATTERN = re.compile(
    r"(?<![A-Za-z0-9])(?:" + "|".join(STEP_WORDS) + r")[-_=]?(\d+)(?![0-9])", re.IGNORECASE
)
MAX_STEP = 10**15
STEP_HINT = (
    "pass --step-from REGEX with one capturing group for the step, e.g. --step-from 'ep(\\d+)'"
)


class TrackInputError(ValueError):
    """The caller's input cannot be used (a path without a step, a malformed criterion): the
    CLI prints it and exits 2."""


# ------------------------------------------------------------------------------ steps
class StepPattern(Protocol):
    """A compiled `--step-from`: an RE2 regexp (or the default `re.Pattern`)."""

    pattern: str
    groups: int

    def search(self, text: str) -> Any: ...


# what Python's `re` has and RE2 has not: lookaround, backreferences (numbered or named)
_NOT_IN_RE2 = "lookaround and backreferences are not supported"


def compile_step_pattern(text: str | None) -> StepPattern:
    """`--step-from`: a regex (RE2 syntax) with exactly one capturing group (the step), or the
    default. RE2 matches in linear time, so no pattern can hang the command."""
    if text is None:
        return DEFAULT_STEP_PATTERN
    import re2  # deferred: only a user's --step-from needs it

    options = re2.Options()
    options.log_errors = False  # RE2 would log the parse error on stderr itself
    try:
        pattern = re2.compile(text, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        reason = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
        if _lookaround_or_backreference(text):
            raise TrackInputError(
                f"--step-from: {_NOT_IN_RE2} (RE2 syntax, which runs in linear time: "
                f"{reason}); e.g. 'step-(\\d+)' instead of '(?<=step-)(\\d+)'"
            ) from None
        if _python_regex(text):  # atomic groups, possessive quantifiers, conditionals, ...
            raise TrackInputError(
                f"--step-from: not RE2 syntax ({reason}); RE2 runs in linear time and has no "
                f"lookaround, backreferences, atomic groups or possessive quantifiers"
            ) from None
        raise TrackInputError(f"--step-from: not a regular expression ({reason})") from None
    if pattern.groups != 1:
        raise TrackInputError(
            f"--step-from needs exactly one capturing group (the step), {text!r} has "
            f"{pattern.groups}; e.g. 'ep(\\d+)', with (?:...) for any other group"
        )
    return pattern


def _python_regex(text: str) -> bool:
    try:
        re.compile(text)
    except re.error:
        return False
    return True


def _lookaround_or_backreference(text: str) -> bool:
    """Is `text` a Python regex using lookaround or backreferences (which RE2 has not)?"""
    return _python_regex(text) and re.search(r"\(\?<?[=!]|\(\?P=|\\[1-9]|\\g<", text) is not None


def step_of(path: str | Path, pattern: StepPattern = DEFAULT_STEP_PATTERN) -> int:
    """The training step a results file belongs to, read from its path (`/` separators).

    With the default pattern every match in the path must agree (`checkpoint-1000/
    global_step1000` is step 1000; `iter_2/step-500` is refused as unclear)."""
    text = Path(path).as_posix()
    if pattern is DEFAULT_STEP_PATTERN:
        found = {m.group(1) for m in pattern.finditer(text)}
        if not found:
            raise TrackInputError(
                f"{text}: no step in the path (no step-500, checkpoint-1000, global_step1500, "
                f"...); {STEP_HINT}"
            )
        if len({int(v) for v in found}) > 1:
            raise TrackInputError(
                f"{text}: the path names several steps ({', '.join(sorted(found, key=int))}); "
                f"{STEP_HINT}"
            )
        value = found.pop()
    else:
        match = pattern.search(text)
        if match is None or match.group(1) is None:
            raise TrackInputError(f"{text}: --step-from {pattern.pattern!r} does not match")
        value = match.group(1)
    if not value.isdigit() or not value.isascii():
        raise TrackInputError(f"{text}: the step {value!r} is not a whole number; {STEP_HINT}")
    if len(value) > 15 or int(value) > MAX_STEP:
        raise TrackInputError(f"{text}: the step {value} is implausibly large")
    return int(value)


def group_by_step(
    paths: Iterable[str | Path], pattern: StepPattern = DEFAULT_STEP_PATTERN
) -> list[tuple[int, list[Path]]]:
    """(step, its files) in step order; the files of one step are one checkpoint."""
    steps: dict[int, list[Path]] = {}
    for path in paths:
        steps.setdefault(step_of(path, pattern), []).append(Path(path))
    return sorted(steps.items())


def checkpoint_name(run: str, step: int) -> str:
    """The private model name of a run's checkpoint: `RUN@step-500`."""
    return f"{run}@step-{step}"


# ------------------------------------------------------------------ what was not used
# (`ResultInputs` field, how `track` says it): the rows of the checkpoints' files that are not
# probe scores, as `predict --from` lists them (unmapped tasks are said apart, with --map)
IGNORED = (
    ("other_metric", "other metric than the benchmark's (not used)"),
    ("not_run", "not run by the tool"),
    ("not_fitted", "not in this snapshot's fit (not used)"),
    ("superseded", "smoke-test scores not used (a full run's are)"),
    ("superseded_subsets", "subset scores not used (a run over more items is)"),
)


def ignored_lines(steps: Sequence[int], inputs: Sequence[Any], limit: int = 12) -> list[str]:
    """One line per kind of result the checkpoints' files hold but `track` did not use
    (`inputs`: each step's `ResultInputs`), each name with the steps it was at unless it was
    at every one: `other metric than the benchmark's (not used): arc_easy (acc_norm) at step
    500`."""
    lines = []
    for field_name, wording in IGNORED:
        at: dict[str, list[int]] = {}
        for step, found in zip(steps, inputs, strict=True):
            for name in getattr(found, field_name, None) or ():
                at.setdefault(name, []).append(step)
        if not at:
            continue
        shown = [
            name if len(where) == len(steps) else f"{name} at {_steps(where)}"
            for name, where in at.items()
        ]
        more = f" ... (+{len(shown) - limit} more; --json lists all)" if len(shown) > limit else ""
        lines.append(f"{wording}: {', '.join(shown[:limit])}{more}")
    return lines


def _steps(where: Sequence[int]) -> str:
    return f"step{'s' if len(where) > 1 else ''} {', '.join(map(str, where))}"


def ignored_payload(found: Any) -> dict[str, list[str]]:
    """`--json`: a checkpoint's results not used, by kind (unmapped tasks included)."""
    kinds = ("unmapped", *(f for f, _ in IGNORED))
    return {kind: list(getattr(found, kind, None) or ()) for kind in kinds}


# --------------------------------------------------------------------------- criteria
OPERATORS: dict[str, Callable[[np.ndarray, float], np.ndarray]] = {
    ">=": np.greater_equal,
    "<=": np.less_equal,
    ">": np.greater,
    "<": np.less,
}
_CRITERION = re.compile(
    r"^\s*(?P<name>[^<>=]+?)\s*(?P<op>>=|<=|=>|=<|==|>|<|=)\s*(?P<value>\S+)\s*$"
)


@dataclass(frozen=True)
class Criterion:
    benchmark: str  # as given by parse_criteria; a canonical id after resolve_criteria
    op: str  # one of OPERATORS
    threshold: float

    def __str__(self) -> str:
        return f"{self.benchmark}{self.op}{self.threshold:g}"

    def holds(self, values: np.ndarray) -> np.ndarray:
        return OPERATORS[self.op](values, self.threshold)


def parse_criteria(text: str) -> list[Criterion]:
    """`"mmlu_pro>=70, gpqa_diamond>=45"` -> criteria (names as written; see
    `resolve_criteria`). Operators: >=, <=, >, <."""
    parts = [p for p in (t.strip() for t in text.split(",")) if p]
    if not parts:
        raise TrackInputError(
            f"--require needs at least one criterion such as mmlu_pro>=70, got {text!r}"
        )
    criteria = []
    for part in parts:
        match = _CRITERION.match(part)
        if match is None:
            raise TrackInputError(
                f"--require: {part!r} is not NAME>=VALUE (or <=, >, <), e.g. mmlu_pro>=70"
            )
        op = match["op"]
        if op not in OPERATORS:
            raise TrackInputError(
                f"--require: {part!r} uses {op!r}; use >=, <=, > or < (a predicted score "
                "is never exactly a value)"
            )
        try:
            value = float(match["value"])
        except ValueError:
            raise TrackInputError(
                f"--require: {part!r} has a non-numeric threshold {match['value']!r}"
            ) from None
        if not math.isfinite(value):
            raise TrackInputError(f"--require: {part!r} needs a finite threshold")
        criteria.append(Criterion(match["name"], op, value))
    return criteria


def resolve_criteria(
    criteria: Sequence[Criterion], resolve: Callable[[str], str], allowed: Sequence[str]
) -> list[Criterion]:
    """Criteria on canonical benchmark ids (`resolve`: the snapshot's name resolver), each
    a benchmark the snapshot predicts (`allowed`); a repeated identical criterion once."""
    keep = set(allowed)
    out: list[Criterion] = []
    for c in criteria:
        benchmark = resolve(c.benchmark)
        if benchmark not in keep:
            raise TrackInputError(
                f"--require: {benchmark} is not predicted by this snapshot (too few scores "
                "to fit); require a fitted benchmark"
            )
        resolved = Criterion(benchmark, c.op, c.threshold)
        if resolved not in out:
            out.append(resolved)
    return out


def _columns(benchmarks: Sequence[str], criteria: Sequence[Criterion]) -> list[int]:
    index = {b: j for j, b in enumerate(benchmarks)}
    return [index[c.benchmark] for c in criteria]


def criteria_mask(
    draws: np.ndarray, benchmarks: Sequence[str], criteria: Sequence[Criterion]
) -> np.ndarray:
    """(draws, criteria) booleans: does criterion c hold in draw k."""
    cols = _columns(benchmarks, criteria)
    return np.stack([c.holds(draws[:, j]) for c, j in zip(criteria, cols, strict=True)], axis=1)


def with_measurement_noise(
    draws: np.ndarray,
    benchmarks: Sequence[str],
    measured: Mapping[str, tuple[float, float]],
    random_state: int = 1,
) -> np.ndarray:
    """`draws` (n, benchmarks) with the column of each observed benchmark in `measured`
    (benchmark -> (score, noise sd)) drawn as score + sd x N(0, 1): where the true score of
    a measured one may lie. Other columns are unchanged; seeded (the caller clips to the
    valid ranges)."""
    out = np.array(draws, dtype=float, copy=True)
    index = {b: j for j, b in enumerate(benchmarks)}
    rng = np.random.default_rng(np.random.SeedSequence(int(random_state)))
    for benchmark, (score, sd) in measured.items():
        j = index.get(benchmark)
        if j is None or not sd > 0:
            continue
        out[:, j] = score + sd * rng.standard_normal(out.shape[0])
    return out


def joint_probability(
    draws: np.ndarray, benchmarks: Sequence[str], criteria: Sequence[Criterion]
) -> float:
    """P(every criterion holds): the fraction of joint draws in which all do."""
    if not criteria:
        raise ValueError("give at least one criterion")
    return float(criteria_mask(draws, benchmarks, criteria).all(axis=1).mean())


def marginal_probabilities(
    draws: np.ndarray, benchmarks: Sequence[str], criteria: Sequence[Criterion]
) -> list[float]:
    """P(criterion holds) for each criterion on its own."""
    return [float(p) for p in criteria_mask(draws, benchmarks, criteria).mean(axis=0)]


def first_meeting(
    steps: Sequence[int], probabilities: Sequence[float], threshold: float = MEET_PROBABILITY
) -> int | None:
    """The first step (in step order) whose probability is at least `threshold`, else None."""
    for step, p in sorted(zip(steps, probabilities, strict=True)):
        if p >= threshold:
            return step
    return None
