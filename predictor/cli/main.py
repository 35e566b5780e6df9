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

from predictor.cli import commands
from predictor.cli.options import Commands, add_commands, reject_empty_store
from predictor.cli.output import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    state_reason,
)
from predictor.util.extras import missing_extra
from predictor.util.paths import benchpress_home, bundled_snapshot_dir
from predictor.util.read_limits import limit_reads, limits_from_environment
from predictor.util.text_safety import one_line, terminal_safe_output


def version_text() -> str:
    """`benchpress --version`: what is installed and where its state lives."""
    # deferred: importlib.metadata takes ~30 ms to import, which `predict` does without
    from importlib.metadata import PackageNotFoundError, version

    # deferred: only --version lists the bundled snapshot (the listing loads no Polars)
    from predictor.snapshots.versions import list_versions

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


def build_parser(complete: bool = False, plugins: bool = True) -> argparse.ArgumentParser:
    """The `benchpress` parser. Each command's options are added when it is parsed;
    `complete=True` adds every command's at once (for walking the whole tree, as the docs do).
    `plugins=False` leaves out the `benchpress.commands` entry points (reading every installed
    package's entry points costs `benchpress predict` tens of milliseconds it does not need)."""
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
    add_commands(sub, commands.COMMANDS)  # read here: `commands.registered` may add some
    if plugins:
        add_plugin_commands(sub)
    if complete:
        sub.complete()
    return parser


def add_plugin_commands(sub: argparse._SubParsersAction) -> None:
    """The commands other packages declare (`benchpress.commands` entry points); a package
    whose extras are missing declares none (it raises ImportError)."""
    from importlib.metadata import entry_points  # deferred: as in `version_text`

    for entry in entry_points(group="benchpress.commands"):
        try:
            register = entry.load()
        except ImportError:  # the pipeline extras are not installed: predictor-only install
            continue
        register(sub)


def _print_warning(message: Warning | str, *_: object, **__: object) -> None:
    print(f"benchpress: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Whatever it prints (tables, messages, argparse's errors) goes through
    `terminal_safe_output`: names from snapshots and payloads never steer the terminal."""
    with terminal_safe_output():
        return _main(argv)


def _own_command(argv: Sequence[str]) -> bool:
    """Whether the command line starts with one of the predictor's own commands: then no
    other package's command can be meant, nor listed."""
    return bool(argv) and any(argv[0] == command.name for command in commands.COMMANDS)


def _main(argv: Sequence[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(plugins=not _own_command(argv))
    try:
        args = parser.parse_args(argv)
    except ImportError as exc:  # a command's options module needs a package of an extra
        code = _error_exit(exc, next((a for a in argv if not a.startswith("-")), "?"))
        if code is None:
            raise
        return code
    reject_empty_store(parser, args)
    try:  # results files named on the command line are read within limits
        limit_reads(limits_from_environment())
    except ValueError as exc:
        parser.error(str(exc))
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
        code = _error_exit(exc, args.command)
        if code is None:  # a bug: its traceback
            raise
        return code
    finally:
        limit_reads(None)  # a caller of `main()` in its own process is not held to them


def _error_exit(exc: Exception, command: str) -> int | None:
    """Print `exc` as one error line and give the exit code, or None when it is not an error
    `benchpress` reports (its traceback is shown). A package of an extra that is not installed
    is said with the extra to install (exit 2), whichever command imported it."""
    # deferred: the error types' modules load numpy and Polars, which `benchpress --help` must not
    from predictor.cli.errors import REPORTED, USAGE

    exc = missing_extra(exc, f"`benchpress {command}`") or exc

    if isinstance(exc, REPORTED):
        # names in a message are data (a results file's, a model's given on the command
        # line): every control character escaped, newlines too, and the line bounded, so
        # the message stays one plain line
        print(f"benchpress: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, USAGE) else EXIT_FAILED
    if isinstance(exc, OSError):  # unreadable / unwritable paths (--out, BENCHPRESS_HOME, ...)
        print(f"benchpress: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_FAILED
    return None


if __name__ == "__main__":
    raise SystemExit(main())
