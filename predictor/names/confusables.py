"""Confusable skeletons of Unicode Technical Standard #39 (Unicode Security Mechanisms).

UTS #39 section 4, "Confusable Detection" (https://www.unicode.org/reports/tr39/): two
strings X and Y are visually confusable when skeleton(X) = skeleton(Y), where

    skeleton(X) = NFD(X with each character of NFD(X) replaced by its prototype)

and a character's prototype is the one confusables.txt maps it to (a character maps to itself
when the file does not list it). So Cyrillic `gрt-4o` and Latin `gpt-4o` share the skeleton
`gpt-4o`. A skeleton is a key for comparing, never a name to show.

The mapping is Unicode's `confusables.txt`, vendored compactly as
`predictor/data/unicode/confusables.tsv` (each mapping line's source and prototype code points;
its header says the Unicode version and where the copy came from), under the Unicode licence
in `predictor/data/unicode/LICENSE`. It is read on first use and kept. `compact()` turns a
newer `confusables.txt` from unicode.org into that file's format.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from pathlib import Path

DATA_FILE = Path(__file__).parent.parent / "data" / "unicode" / "confusables.tsv"
UNICODE_VERSION = "13.0.0"  # the `Version:` of the vendored confusables.txt
_VERSION_LINE = re.compile(r"#\s*Version:\s*(\S+)")


@functools.cache
def prototypes() -> dict[str, str]:
    """Character -> its prototype (one or more characters), from the vendored file."""
    table: dict[str, str] = {}
    for line in DATA_FILE.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        source, target = line.split("\t")
        table[chr(int(source, 16))] = "".join(chr(int(c, 16)) for c in target.split())
    return table


@functools.cache
def _translation() -> dict[int, str]:
    return {ord(c): prototype for c, prototype in prototypes().items()}


def skeleton(text: str) -> str:
    """UTS #39 skeleton: NFD, each character through its confusables.txt prototype, NFD."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", decomposed.translate(_translation()))


def compact(confusables_txt: str) -> str:
    """The vendored file's text from an original `confusables.txt`: a header naming its
    version and date, then one `SOURCE<TAB>PROTOTYPE` line (hex code points) per mapping."""
    version = next(
        (m.group(1) for m in map(_VERSION_LINE.match, confusables_txt.splitlines()) if m), "?"
    )
    date = next(
        (ln.split(":", 1)[1].strip() for ln in confusables_txt.splitlines() if "# Date:" in ln),
        "?",
    )
    lines = [
        f"# Unicode confusables.txt {version} ({date}): UTS #39 prototype mappings, one per",
        "# line as SOURCE<TAB>PROTOTYPE in hex code points; the original's comments dropped.",
        "# Copyright (c) Unicode, Inc.; Unicode licence: LICENSE beside this file.",
    ]
    for raw in confusables_txt.lstrip("\ufeff").splitlines():
        data = raw.split("#", 1)[0].strip()
        if not data:
            continue
        source, target, *_ = (field.strip() for field in data.split(";"))
        lines.append(f"{source}\t{target}")
    return "\n".join(lines) + "\n"
