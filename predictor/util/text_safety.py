"""Terminal-safe text: strings from snapshots, payloads and results files are data.

A model id holding `ESC [2J` would clear the screen of whoever prints it, a C1 control or a
bidirectional override (U+202E) would rearrange what the terminal shows. `printable` renders
each such character as visible escape text (`\\x1b`, `\\x85`, `\\u202e`), and `SafeStream`
applies the same to everything a command writes, so every table and message of `benchpress`
is covered without each `print` having to remember (`terminal_safe_output` installs it on
stdout and stderr for the length of a command).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

# C0 controls, DEL, C1 controls, and the bidirectional embeddings, overrides and isolates
# that reorder what a terminal shows
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# the same set less the newline: lines written by a command stay lines
_CONTROL_BUT_NEWLINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()  # as Python writes it: \n, \t, \x1b, \x85; \u202e above 0xff
    return repr(char)[1:-1] if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def printable(text: object) -> str:
    """`text` with every control character escaped (`\\x1b`, `\\n`, `\\u202e`): a name from a
    file prints as what it is, on one line."""
    return CONTROL.sub(_escape, str(text))


# At most this many characters of a name in a message: a model id is a few dozen
NAME_LIMIT = 200


def shortened(text: str, limit: int = NAME_LIMIT) -> str:
    """`text` cut to its first `limit` characters, then an ellipsis and its whole length
    (`xxxx… (2097152 characters)`); `text` itself when it is no longer."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\u2026 ({len(text)} characters)"


def quoted(value: object, limit: int = NAME_LIMIT) -> str:
    """`value` for an error message, as `{value!r}` shows it but bounded: a string quoted with
    every control character escaped (`'evil\\nname'`), cut to `limit` characters with an
    ellipsis and its length; anything else by its repr, cut the same way. A 2 MB name or one
    holding newlines and terminal codes stays one short line."""
    if isinstance(value, str):
        cut = value[:limit]
        more = f"\u2026 ({len(value)} characters)" if len(value) > limit else ""
        return printable(repr(cut)) + more
    return printable(shortened(repr(value), limit))


def one_line(text: object, limit: int = 10_000) -> str:
    """A message as one bounded line: every control character escaped (newlines too) and
    cut to `limit` characters (`shortened`)."""
    return printable(shortened(str(text), limit))


def printable_lines(text: str) -> str:
    """`printable`, but newlines are kept: for whole blocks of output (tables, messages)."""
    return _CONTROL_BUT_NEWLINE.sub(_escape, text)


class StreamWrapper:
    """A text stream in front of `raw`: `write` is the subclass's, everything else (isatty,
    fileno, encoding, buffer, flush, close) is `raw`'s own, so callers that ask whether they
    write to a terminal get the true answer."""

    def __init__(self, raw: IO[str]):
        self.raw = raw

    def write(self, text: str) -> int:
        return self.raw.write(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


class SafeStream(StreamWrapper):
    """Writes `printable_lines(text)` to `raw`. Code that must write control characters on
    purpose (a progress bar's carriage returns, CSV bytes piped to a file) writes to
    `raw_stream(stream)` instead."""

    def write(self, text: str) -> int:
        self.raw.write(printable_lines(text))
        return len(text)  # what the caller handed over, as io.TextIOBase.write counts


def raw_stream(stream: IO[str] | StreamWrapper) -> IO[str]:
    """The stream under every `StreamWrapper` in front of it (or `stream` itself)."""
    while isinstance(stream, StreamWrapper):
        stream = stream.raw
    return stream


@contextmanager
def terminal_safe_output() -> Iterator[None]:
    """`sys.stdout` and `sys.stderr` as `SafeStream`s for the block, restored afterwards
    (whatever they were: a terminal, a pipe, pytest's capture)."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(saved[0]), SafeStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
