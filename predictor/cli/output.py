"""How `benchpress` commands answer: tables, JSON, CSV, error lines, exit codes and
progress bars.

Every command that answers with a table builds it as the tidy Polars frame the Python API
returns and hands it to `emit`, which prints it as

- a human table (the default; the command may pass its own layout),
- JSON (`--json`; the command's payload, by default the frame's rows), or
- CSV (`--csv`): exactly that frame, `polars.DataFrame.write_csv` to stdout, header included;
  `polars.read_csv` gives back the same columns and values, but for text cells a spreadsheet
  would run as a formula (`=`, `+`, `-`, `@`, tab, CR first), written with a leading `'`.

`--json` and `--csv` are one argparse mutually exclusive group
(`predictor.cli.options.add_output_options`).

Progress bars (`progress_bar`, tqdm) go to stderr: by default only when stderr is a terminal
and the answer is a human table, so pipes, `--json`, `--csv` and tests stay clean.
`--progress` forces a bar (stdout is untouched, so it also works with `--json`/`--csv`),
`--no-progress` turns it off.

Like `predictor.cli.options`, this module loads no numpy or Polars (every `benchpress` start
imports it).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from predictor.util.item_subsets import shown_score
from predictor.util.paths import home_origin
from predictor.util.text_safety import printable, raw_stream

if TYPE_CHECKING:
    import polars as pl
    from tqdm import tqdm

    from predictor.results.errors import ResultsError
    from predictor.results.inputs import ResultInputs
    from predictor.results.runnable import NextSteps

TABLE, JSON, CSV = "table", "json", "csv"


class CommandError(Exception):
    """A user-facing failure: printed as `benchpress: error: ...` with a non-zero exit."""


EXIT_FAILED = 1  # the command failed (a broken snapshot, an unreachable store, a check)
EXIT_USAGE = 2  # the caller's input: a bad option, an unknown name, an unusable score
EXIT_INTERRUPTED = 130  # Ctrl-C
SHOWN_NAMES = 12  # unmapped tasks listed in the table output (all of them in --json)


# --------------------------------------------------------------------------- text
def print_side(side: Any, label: str = "model") -> None:
    """The family and release date a new model was folded in with and why (a
    `predictor.values.SideUsed`), under the table; `--json` has them as `side`."""
    print(f"{label}: {printable(side.describe())}")


def level_label(level: float) -> str:
    """0.9 -> "90%", 0.29 -> "29%", 0.925 -> "92.5%" (no truncation of the level)."""
    return f"{round(level * 100, 1):g}%"


def interval_text(low: float, high: float) -> str:
    """An interval as its two ends to one decimal, `35.5-100.0` (`-5.0 to 12.0` when an end is
    negative): a table's `±` half-width read as symmetric, which near a bound it is not."""
    sep = " to " if low < 0 or high < 0 else "-"
    return f"{low:.1f}{sep}{high:.1f}"


def plural(count: int, noun: str) -> str:
    """`1 benchmark`, `3 benchmarks`."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def state_reason() -> str:
    """Why state lives where it does, in words."""
    if home_origin() == "BENCHPRESS_HOME":
        return "set by BENCHPRESS_HOME"
    return "the default; set BENCHPRESS_HOME to use another folder"


def output_format(args: argparse.Namespace) -> str:
    if getattr(args, "csv", False):
        return CSV
    if getattr(args, "json", False):
        return JSON
    return TABLE


# --------------------------------------------------------------------------- printing
# every command runs inside `text_safety.terminal_safe_output` (see `predictor.cli.main`): what
# it prints has its control characters escaped; `printable` escapes one name explicitly (e.g.
# newlines too, for a name quoted inside a one-line message)


def clean(value: Any) -> Any:
    """NaN / infinity -> None, so JSON output stays valid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def frame_rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """The frame's rows as dicts, non-finite floats as None (for JSON)."""
    return [{k: clean(v) for k, v in row.items()} for row in frame.to_dicts()]


def jsonable(value: Any) -> Any:
    """`value` with every non-finite float (at any depth) as None: strict JSON for any parser."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return clean(value)


def json_text(payload: Any) -> str:
    """`payload` as strict, indented JSON (NaN and infinity as null)."""
    return json.dumps(jsonable(payload), indent=2, default=str, allow_nan=False)


def print_json(payload: Any) -> None:
    print(json_text(payload))


# a text cell starting with one of these is run as a formula by spreadsheets (CSV injection)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise_cell(text: str) -> str:
    """`=cmd|' /C calc'!A0` -> `'=cmd|' /C calc'!A0`: a text that a spreadsheet would run as
    a formula, with a leading single quote (OWASP's advice), so it is shown as text."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def csv_safe(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` with every text cell and column name `neutralise_cell`ed. Only text (String,
    Categorical, Enum) columns are touched: numbers, negative ones included, stay numbers."""
    import polars as pl  # deferred: `benchpress --help` imports this module

    starts = r"^[=+\-@\t\r]"  # FORMULA_STARTS
    text = [
        name
        for name, dtype in frame.schema.items()
        if dtype == pl.String or isinstance(dtype, pl.Categorical | pl.Enum)
    ]
    safe = frame.with_columns(
        pl.when(pl.col(name).cast(pl.String).str.contains(starts))
        .then(pl.lit("'") + pl.col(name).cast(pl.String))
        .otherwise(pl.col(name).cast(pl.String))
        .alias(name)
        for name in text
    )
    renamed = {name: neutralise_cell(name) for name in safe.columns}
    if any(old != new for old, new in renamed.items()):
        safe = safe.rename(renamed)
    return safe


def write_csv(frame: pl.DataFrame) -> None:
    """The frame as CSV on stdout (Polars `write_csv`, header included).

    A text cell (or column name) starting with `=`, `+`, `-`, `@`, tab or CR gets a leading
    `'` (`csv_safe`: a spreadsheet opening the file must not run it as a formula); every
    other value is written exactly (`polars.read_csv` gives it back), numbers as numbers. On
    a terminal, control characters are escaped like every other output."""
    nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
    if nested:  # a programming error: CSV holds flat tables only
        raise TypeError(f"cannot write nested columns {nested} as CSV")
    out = sys.stdout if _is_terminal(sys.stdout) else raw_stream(sys.stdout)
    out.write(csv_safe(frame).write_csv())
    out.flush()


def column_decimals(values: Sequence[object]) -> int:
    """Decimals for a column of floats: 1 when its typical (median non-zero) magnitude is
    >= 10 (scores), 2 when >= 1 (costs), else 3, so probabilities keep their digits (0.88
    must not print as 0.9, nor 0.96 as 1.0)."""
    magnitudes = [abs(v) for v in values if isinstance(v, float) and math.isfinite(v) and v]
    typical = statistics.median(magnitudes) if magnitudes else 10.0
    return 1 if typical >= 10 else 2 if typical >= 1 else 3


def print_table(rows: list[dict[str, object]], columns: Sequence[str]) -> None:
    """Aligned columns; floats with the decimals of `column_decimals` for their column.
    Every cell is `printable` (a name holding a newline or ESC stays one visible cell)."""
    decimals = {c: column_decimals([r[c] for r in rows]) for c in columns}

    def cell(value: object, column: str) -> str:
        return f"{value:.{decimals[column]}f}" if isinstance(value, float) else printable(value)

    widths = {c: max([len(printable(c)), *(len(cell(r[c], c)) for r in rows)]) for c in columns}
    print("  ".join(printable(c).ljust(widths[c]) for c in columns))
    for row in rows:
        print("  ".join(cell(row[c], c).ljust(widths[c]) for c in columns))


def print_frame(frame: pl.DataFrame, columns: Sequence[str] | None = None) -> None:
    """`print_table` of a frame (missing values blank), or `(nothing)` when it is empty."""
    rows = frame_rows(frame)
    columns = list(columns or frame.columns)
    if rows:
        print_table([{c: ("" if r[c] is None else r[c]) for c in columns} for r in rows], columns)
    else:
        print("(nothing)")


_ROWS = object()


def emit(
    args: argparse.Namespace,
    frame: pl.DataFrame,
    *,
    payload: Any = _ROWS,
    table: Callable[[], None] | None = None,
) -> None:
    """Print a command's answer in the format `args` asks for.

    `frame`: the tidy table (the Python API's frame), written as is with `--csv`.
    `payload`: what `--json` prints (default: the frame's rows).
    `table`: prints the human table (default: `print_frame(frame)`).
    """
    fmt = output_format(args)
    if fmt == CSV:
        write_csv(frame)
    elif fmt == JSON:
        print_json(frame_rows(frame) if payload is _ROWS else payload)
    elif table is not None:
        table()
    else:
        print_frame(frame)


# --------------------------------------------------------------------------- --from inputs
# what `--from PATH` gave (`predictor.cli.inputs`): the block printed above the answer says
# what was used and what not (`read N files (formats): M scores used: ...`, the unmapped
# tasks, notes where a local run sits on another harness or shot count than the matrix's
# scores). Names from files are data: everything printed from them goes through `printable`.


def _names(names: list[str], limit: int = SHOWN_NAMES) -> str:
    shown = ", ".join(printable(n) for n in names[:limit])
    more = len(names) - limit
    return shown + (f" ... (+{more} more; --json lists all)" if more > 0 else "")


def _score(value: float | tuple[float, float]) -> str:
    """A score as given: `74`, or with its standard error `74+-1.5`."""
    if isinstance(value, tuple):
        return f"{value[0]:.4g}+-{value[1]:.4g}"
    return f"{value:.4g}"


def given_scores(extra: dict[str, float | tuple[float, float]] | None) -> dict[str, object]:
    """`--scores` for `--json`: {"scores": name -> score} and, when some came with one,
    {"stderr": name -> standard error}."""
    scores = {n: v[0] if isinstance(v, tuple) else v for n, v in (extra or {}).items()}
    stderr = {n: v[1] for n, v in (extra or {}).items() if isinstance(v, tuple)}
    return {"scores": scores, **({"stderr": stderr} if stderr else {})}


def _subset_score(row: dict[str, object], stderr: float | None) -> str:
    """A subset run's score, told apart from a full run's: `62.5 ±4.8 (100 of 240 items)`."""
    return shown_score(row["score"], stderr, row["n"] or 0, row["items_total"])


def print_inputs(
    inputs: ResultInputs, extra: dict[str, float] | None = None, replaced: list[str] = ()
) -> None:
    """The block above the answer: files read, scores used, what was not used and why."""
    count = len(inputs.files)
    formats = ", ".join(inputs.formats)
    model = f" for {printable(inputs.model)}" if inputs.model is not None else ""
    subsets = {r["benchmark_id"]: r for r in inputs.used if r.get("items_total") is not None}
    used = [
        f"{b}={_subset_score(subsets[b], inputs.stderr.get(b)) if b in subsets else _score(v)}"
        for b, v in inputs.scores.items()
        if b not in replaced
    ]
    head = f"read {count} file{'s' if count != 1 else ''} ({formats}){model}: "
    head += f"{len(used)} score{'s' if len(used) != 1 else ''} used"
    print(head + (f": {', '.join(used)}" if used else ""))
    if extra:
        given = ", ".join(f"{printable(n)}={_score(v)}" for n, v in extra.items())
        over = f" (replacing the files' {', '.join(replaced)})" if replaced else ""
        print(f"--scores: {given}{over}")
    if inputs.unmapped or inputs.subtasks:
        groups = [
            f"{n} subtask{'s' if n != 1 else ''} of {printable(g)}"
            for g, n in inputs.subtasks.items()
        ]
        listed = _names(inputs.unmapped) if inputs.unmapped else ""
        counted = f"({'; '.join(groups)} not listed)" if groups else ""
        print(f"unmapped: {' '.join(p for p in (listed, counted) if p)}")
    if inputs.other_metric:
        print(f"other metric than the benchmark's: {_names(inputs.other_metric)}")
    if inputs.not_run:
        print(f"not run by the tool: {_names(inputs.not_run)}")
    if inputs.not_fitted:
        print(f"not in this snapshot's fit: {_names(inputs.not_fitted)}")
    if inputs.limited:
        print(f"smoke-test scores used (--allow-limited): {_names(inputs.limited)}")
    if inputs.superseded:
        print(f"smoke-test scores not used (a full run's are): {_names(inputs.superseded)}")
    if inputs.superseded_subsets:
        print(
            "subset scores not used (a run over more items is): "
            f"{_names(inputs.superseded_subsets)}"
        )
    for note in inputs.notes:
        print(f"note: {printable(note)}")
    if inputs.unmapped or inputs.subtasks:
        print("(map a task with --map TASK=BENCHMARK)")


def inputs_payload(
    inputs: ResultInputs | None, extra: dict[str, float] | None = None, replaced: list[str] = ()
) -> dict[str, object]:
    """`--json` `inputs`: the rows used with their source, unmapped tasks, notes."""
    payload: dict[str, object] = inputs.as_dict() if inputs else {"used": []}
    given = given_scores(extra)  # as given with --scores
    payload["scores"] = given["scores"]
    if "stderr" in given:
        payload["scores_stderr"] = given["stderr"]
    payload["replaced_by_scores"] = list(replaced)
    return payload


def no_scores_error(inputs: ResultInputs | None, where: str = "results") -> ResultsError:
    """Nothing usable in the files (and no --scores): say what was there instead."""
    # deferred: the predictor.results package loads Polars; `benchpress --help` imports this
    from predictor.results.errors import ResultsError

    seen = (
        [
            *inputs.unmapped,
            *(f"{n} subtasks of {g}" for g, n in inputs.subtasks.items()),
            *(f"{t} (another metric)" for t in inputs.other_metric),
            *(f"{b} (not in this snapshot's fit)" for b in inputs.not_fitted),
            *(f"{t} (not run)" for t in inputs.not_run),
        ]
        if inputs
        else []
    )
    found = f"the files hold {_names(seen, 6)}; " if seen else ""
    return ResultsError(
        where,
        "no result maps onto a benchmark of ours",
        hint=f"{found}map a task with --map TASK=BENCHMARK, or give --scores",
    )


def print_next_steps(steps: NextSteps) -> None:
    """The ready command lines under a probes / next table."""
    lines = steps.lines()
    if lines:
        print()
        for line in lines:
            print(printable(line))
    if steps.unregistered:
        bare = ", ".join(steps.unregistered)
        print(f"Inspect tasks without a registry name (run them from their own package): {bare}")
    if steps.unknown:
        print(f"no lm-eval or Inspect task known for: {', '.join(steps.unknown)}")


# --------------------------------------------------------------------------- progress
def progress_enabled(args: argparse.Namespace, auto: bool = True) -> bool:
    """`--progress`/`--no-progress` if given; else a bar only for table output on a terminal
    (and only if `auto`: a command may opt out, e.g. `refresh --verbose` prints a log)."""
    choice = getattr(args, "progress", None)
    if choice is not None:
        return bool(choice)
    return auto and output_format(args) == TABLE and _stderr_is_terminal()


def _stderr_is_terminal() -> bool:
    return _is_terminal(sys.stderr)


def _is_terminal(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):  # replaced or closed stream
        return False


class Progress:
    """A tqdm bar on stderr, made on the first report so that it starts with its total.

    A no-op unless `progress_enabled(args, auto)`; `enabled` tells a command whether to hand
    out callbacks at all. Use as a context manager: the bar is gone (`leave=False`) before
    the answer is printed.
    """

    def __init__(self, args: argparse.Namespace, auto: bool = True, **tqdm_kwargs: Any):
        self.enabled = progress_enabled(args, auto)
        self.bar: tqdm | None = None
        self._kwargs = {"leave": False, "dynamic_ncols": True, **tqdm_kwargs}
        if "desc" in self._kwargs:
            self._kwargs["desc"] = printable(self._kwargs["desc"])

    def _ensure(self, total: int | None) -> tqdm | None:
        if not self.enabled:
            return None
        if self.bar is None:
            # deferred: tqdm takes ~0.1 s to import; most runs draw no bar, and --help none
            from tqdm import tqdm

            # the bar's own carriage returns must reach the terminal: the raw stream, with
            # the texts shown in it escaped here (`describe`, `postfix`)
            self.bar = tqdm(file=raw_stream(sys.stderr), total=total, **self._kwargs)
        elif total is not None and self.bar.total != total:
            self.bar.total = total
            self.bar.refresh()
        return self.bar

    def update_to(self, done: int, total: int | None = None) -> None:
        """`done` units out of `total` finished (the `progress(done, total)` callback)."""
        bar = self._ensure(total)
        if bar is not None and done > bar.n:
            bar.update(done - bar.n)

    __call__ = update_to

    def advance(self, units: int = 1, total: int | None = None) -> None:
        bar = self._ensure(total)
        if bar is not None:
            bar.update(units)

    def describe(self, text: str) -> None:
        """What is running now (shown before the bar)."""
        bar = self._ensure(None)
        if bar is not None:
            bar.set_description_str(printable(text))

    def postfix(self, text: str) -> None:
        """A detail shown after the bar (e.g. the step that is running)."""
        bar = self._ensure(None)
        if bar is not None:
            bar.set_postfix_str(printable(text))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.refresh()  # draw the final count (a log or pipe keeps it; a terminal clears)
            self.bar.close()
            self.bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress_bar(args: argparse.Namespace, auto: bool = True, **tqdm_kwargs: Any) -> Progress:
    """The command's progress bar (see `Progress`); `tqdm_kwargs` e.g. `desc`, `unit`."""
    return Progress(args, auto, **tqdm_kwargs)
