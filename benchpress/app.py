"""`python -m benchpress.app`: the web page, exactly as `benchpress app` serves it.

Same options (`--host`, `--port`, `--store`, `--quiet`), messages and exit codes: the
arguments go to the `benchpress` command's `app` subcommand (`predictor.cli.app`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from predictor.cli import main as benchpress


def main(argv: Sequence[str] | None = None) -> int:
    return benchpress(["app", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(main())
