"""MkDocs hook: the CLI reference shows each command's `--help` as the installed parser prints it.

A page marks a place with `<!-- cli-help: snapshots list -->`; the marker becomes the command's
help text, so the reference never drifts from the code. On the page holding markers, every
command the parser knows must have one: a command added without documentation is a warning,
which `mkdocs build --strict` turns into a failure. A marker for a command this installation
does not have (an optional extra not installed) becomes a note instead of help text.
"""

from __future__ import annotations

import argparse
import logging
import os
import re

log = logging.getLogger("mkdocs.hooks.cli_help")
MARKER = re.compile(r"<!-- cli-help: ([a-z][a-z -]*?) -->")
WIDTH = "100"  # argparse wraps help text to $COLUMNS


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _commands() -> dict[str, argparse.ArgumentParser]:
    """Every command path ("predict", "snapshots list") -> its parser, leaves and groups."""
    from predictor.cli import build_parser

    found: dict[str, argparse.ArgumentParser] = {}

    def walk(prefix: str, parser: argparse.ArgumentParser) -> None:
        for name, child in _subcommands(parser).items():
            path = f"{prefix} {name}".strip()
            found[path] = child
            walk(path, child)

    walk("", build_parser(complete=True))  # every command's options, not only its name
    return found


def _leaves(commands: dict[str, argparse.ArgumentParser]) -> set[str]:
    return {path for path, parser in commands.items() if not _subcommands(parser)}


def on_page_markdown(markdown: str, page, config, files) -> str:
    if not MARKER.search(markdown):
        return markdown
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        commands = _commands()
        shown: set[str] = set()

        def render(match: re.Match[str]) -> str:
            path = " ".join(match.group(1).split())
            parser = commands.get(path)
            if parser is None:
                log.info("cli_help: %s: no command `benchpress %s` here", page.file.src_uri, path)
                return (
                    f'!!! note "Not in this installation"\n    `benchpress {path}` is not '
                    "installed here; install the package with its extras to get it."
                )
            shown.add(path)
            return f"```text\n{parser.format_help().rstrip()}\n```"

        markdown = MARKER.sub(render, markdown)
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous
    for path in sorted(_leaves(commands) - shown):
        log.warning("cli_help: %s documents no `benchpress %s`", page.file.src_uri, path)
    return markdown
