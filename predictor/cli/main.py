"""The `benchpress` parser, dispatch and exit codes.

The predictor's commands are listed in `predictor.cli.commands`; the pipeline package
contributes `refresh`, `sources` and `warehouse`, the private store `models` and `track`,
through the `benchpress.commands` entry-point group, so the predictor installs and runs
alone. A command's module is imported only when the command is parsed: `benchpress --help`
loads none of them (nor numpy or Polars).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, entry_points, version

from predictor.cli.commands import COMMANDS
from predictor.cli.options import Commands, add_commands, reject_empty_store
from predictor.cli.output import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    printable,
    state_reason,
)
from predictor.paths import benchpress_home, bundled_snapshot_dir
from predictor.text_safety import terminal_safe_output


def version_text() -> str:
    """`benchpress --version`: what is installed and where its state lives."""
    # deferred: predictor.snapshots loads Polars; only --version lists the bundled snapshot
    from predictor.snapshots import list_versions

    try:
        installed = version("benchpress-llm")
    except PackageNotFoundError:  # run from a source tree that was never installed
        installed = "unknown"
    bundled = ", ".join(list_versions(bundled_snapshot_dir())) or "none"
    return (
        f"benchpress-llm {installed}\nbundled snapshot: {bundled}\n"
        f"state: {benchpress_home()} ({state_reason()})"
    )


class _Version(argparse._VersionAction):
    """`--version`, its text made when it is asked for (it reads the bundled snapshots)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        self.version = version_text()
        super().__call__(parser, namespace, values, option_string)


def build_parser(complete: bool = False) -> argparse.ArgumentParser:
    """The `benchpress` parser. Each command's options are added when it is parsed;
    `complete=True` adds every command's at once (for walking the whole tree, as the docs do)."""
    parser = argparse.ArgumentParser(
        prog="benchpress",
        formatter_class=argparse.RawDescriptionHelpFormatter,  # --version keeps its lines
        description="Predict LLM benchmark scores from a few probe scores, from pinned snapshots.",
    )
    parser.add_argument(
        "--version",
        action=_Version,
        help="the package version, the bundled snapshot and where state lives",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", action=Commands)
    add_commands(sub, COMMANDS)
    for entry in entry_points(group="benchpress.commands"):
        try:
            register = entry.load()
        except ImportError:  # the pipeline extras are not installed: predictor-only install
            continue
        register(sub)
    if complete:
        sub.complete()
    return parser


def _print_warning(message: Warning | str, *_: object, **__: object) -> None:
    print(f"benchpress: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Whatever it prints (tables, messages, argparse's errors) goes through
    `terminal_safe_output`: names from snapshots and payloads never steer the terminal."""
    with terminal_safe_output():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    reject_empty_store(parser, args)
    try:
        with warnings.catch_warnings():  # e.g. a stale cached snapshot: one plain stderr line
            warnings.showwarning = _print_warning
            return int(args.func(args) or 0)
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("benchpress: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        code = _error_exit(exc)
        if code is None:  # a bug: its traceback
            raise
        return code


def _error_exit(exc: Exception) -> int | None:
    """Print `exc` as one error line and give the exit code, or None when it is not an error
    `benchpress` reports (its traceback is shown)."""
    # deferred: the error types' modules load numpy and Polars, which `benchpress --help` must not
    from predictor.cli.errors import REPORTED, USAGE, ResultsError

    if isinstance(exc, REPORTED):
        # a results file's names are data: escaped, so the message stays one plain line
        message = printable(exc) if isinstance(exc, ResultsError) else exc
        print(f"benchpress: error: {message}", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, USAGE) else EXIT_FAILED
    if isinstance(exc, OSError):  # unreadable / unwritable paths (--out, BENCHPRESS_HOME, ...)
        print(f"benchpress: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    return None


if __name__ == "__main__":
    raise SystemExit(main())
