"""How `benchpress` commands print their answer, and their progress bars.

Every command that answers with a table builds it as the tidy Polars frame the Python API
returns and hands it to `emit`, which prints it as

- a human table (the default; the command may pass its own layout),
- JSON (`--json`; the command's payload, by default the frame's rows), or
- CSV (`--csv`): exactly that frame, `polars.DataFrame.write_csv` to stdout, header included;
  `polars.read_csv` gives back the same columns and values.

`--json` and `--csv` are one argparse mutually exclusive group (`add_output_options`).

Progress bars (`progress_bar`, tqdm) go to stderr: by default only when stderr is a terminal
and the answer is a human table, so pipes, `--json`, `--csv` and tests stay clean.
`--progress` forces a bar (stdout is untouched, so it also works with `--json`/`--csv`),
`--no-progress` turns it off.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from predictor.text_safety import printable, raw_stream

if TYPE_CHECKING:
    import polars as pl
    from tqdm import tqdm

TABLE, JSON, CSV = "table", "json", "csv"


class CommandError(Exception):
    """A user-facing failure: printed as `benchpress: error: ...` with a non-zero exit."""


# --------------------------------------------------------------------------- options
def add_output_options(
    parser: argparse.ArgumentParser,
    json_help: str = "machine-readable output (JSON)",
    csv_help: str = "the result table as CSV (the Python API's frame, header included)",
) -> None:
    """`--json` / `--csv`, mutually exclusive (argparse says so and exits 2)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--json", action="store_true", help=json_help)
    group.add_argument("--csv", action="store_true", help=csv_help)


PROGRESS_HELP = (
    "progress bar on stderr (default: only when stderr is a terminal and the output is a "
    "table; --progress forces it, --no-progress turns it off)"
)


def add_progress_option(parser: argparse.ArgumentParser, help: str = PROGRESS_HELP) -> None:
    """`--progress` / `--no-progress` (default: a bar only on a terminal, for table output)."""
    parser.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None, help=help
    )


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (`--k 0` is a usage error, not an empty answer)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def interval_level(text: str) -> float:
    """argparse type: an interval level (0.9 = 90%), within the bounds the API serves."""
    from predictor.methods.common import check_level

    try:
        return check_level(float(text))
    except ValueError as exc:
        message = str(exc) if "level" in str(exc) else f"expected a number, got {text!r}"
        raise argparse.ArgumentTypeError(f"{message} (e.g. 0.9)") from None


def level_label(level: float) -> str:
    """0.9 -> "90%", 0.29 -> "29%", 0.925 -> "92.5%" (no truncation of the level)."""
    return f"{round(level * 100, 1):g}%"


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


def write_csv(frame: pl.DataFrame) -> None:
    """The frame as CSV on stdout (Polars `write_csv`, header included).

    Into a pipe or file the values are written exactly (`polars.read_csv` gives them back);
    on a terminal, control characters in them are escaped like every other output."""
    nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
    if nested:  # a programming error: CSV holds flat tables only
        raise TypeError(f"cannot write nested columns {nested} as CSV")
    out = sys.stdout if _is_terminal(sys.stdout) else raw_stream(sys.stdout)
    out.write(frame.write_csv())
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
