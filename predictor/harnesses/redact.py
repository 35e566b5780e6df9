"""Keeping the API key out of what a probe run shows and leaves behind.

The key (`BENCHPRESS_MODEL_API_KEY`) reaches the tool through its environment and the
endpoint through the Authorization header; benchpress never prints it. But a server may
echo it (a careless proxy's error page quotes the headers it got), and the tools then log
that body, raise it as their error, or write it into their own log. So while the tools run:

- `redacted_output(key)`: whatever the process writes to its standard output and error (file
  descriptors 1 and 2: the tools' loggers, warnings and progress bars, and any child process
  they start) passes through a filter that replaces the key with `***` (`REDACTED`), also
  when it is split across writes;
- `redact(text, key)`: the same for a message (a failed task's error, an endpoint error);
- `plain_text(message)`: a tool's message without the Rich console markup Inspect writes in
  its errors (`[bold]ERROR[/bold]: ...`), on one line.

A key shorter than `MIN_KEY` characters is left alone: replacing every "1" of the output
would hide more than it protects."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from collections.abc import Iterator

REDACTED = "***"
MIN_KEY = 4
JOIN_SECONDS = 5.0  # for the filter to pass on what was written before the fd was put back
_RICH_TAG = re.compile(
    r"\[/?(?:bold|italic|dim|underline|strike|blink|reverse|red|green|yellow|blue|magenta|"
    r"cyan|white|black|b|i|u|s)(?: [a-z_]+)*\]"
)


def _secret(key: str | None) -> str | None:
    return key if key and len(key) >= MIN_KEY else None


def redact(text: str, key: str | None) -> str:
    """`text` with every occurrence of `key` replaced by `***`."""
    secret = _secret(key)
    return text.replace(secret, REDACTED) if secret else text


def plain_text(message: str) -> str:
    """A tool's message as one plain line: Rich markup tags dropped, whitespace folded."""
    return " ".join(_RICH_TAG.sub("", message).split())


class _Filter:
    """Replaces the key in a byte stream, holding back a tail that could begin it."""

    def __init__(self, secret: bytes) -> None:
        self.secret = secret
        self.held = b""

    def feed(self, data: bytes) -> bytes:
        text = (self.held + data).replace(self.secret, REDACTED.encode())
        keep = 0
        for size in range(min(len(self.secret) - 1, len(text)), 0, -1):
            if text.endswith(self.secret[:size]):
                keep = size
                break
        self.held = text[len(text) - keep :]
        return text[: len(text) - keep]

    def close(self) -> bytes:
        rest, self.held = self.held, b""
        return rest


def _pump(read_end: int, target: int, secret: bytes) -> None:
    """Copy the pipe to the original descriptor through the filter, until every writer closed."""
    flt = _Filter(secret)
    try:
        while chunk := os.read(read_end, 1 << 16):
            _write_all(target, flt.feed(chunk))
        _write_all(target, flt.close())
    except OSError:  # the original descriptor went away (a closed pipe): nothing to show
        pass
    finally:
        os.close(read_end)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _flush_python_streams() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:
            with contextlib.suppress(Exception):  # a closed or detached stream
                stream.flush()


@contextlib.contextmanager
def redacted_output(key: str | None, fds: tuple[int, ...] = (1, 2)) -> Iterator[None]:
    """While inside, what is written to `fds` comes out with `key` redacted (nothing changes
    without a key, or with one shorter than `MIN_KEY`)."""
    secret = _secret(key)
    if secret is None:
        yield
        return
    _flush_python_streams()
    filters: list[tuple[int, int, threading.Thread]] = []
    try:
        for fd in fds:
            try:
                saved = os.dup(fd)
            except OSError:  # not open in this process: nothing goes there
                continue
            read_end, write_end = os.pipe()
            os.dup2(write_end, fd)
            os.close(write_end)
            pump = threading.Thread(
                target=_pump,
                args=(read_end, saved, secret.encode()),
                name=f"redact-fd{fd}",
                daemon=True,
            )
            pump.start()
            filters.append((fd, saved, pump))
        yield
    finally:
        _flush_python_streams()
        for fd, saved, _ in filters:
            os.dup2(saved, fd)  # the pipe's last writer here: its reader sees the end
        for _, saved, pump in filters:
            pump.join(JOIN_SECONDS)
            if not pump.is_alive():  # else a child process still holds the pipe: leave it
                os.close(saved)
