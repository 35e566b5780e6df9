"""Run the `benchpress` command in-process against the bundled snapshot, as a user would."""

from __future__ import annotations

import pytest

from predictor.cli import main
from predictor.util.paths import bundled_snapshot_dir

STORE = str(bundled_snapshot_dir())


def bundled_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `benchpress ARGV --store <bundled>`; argparse's usage
    errors give their exit code rather than raising."""
    try:
        code = main([*argv, "--store", STORE])
    except SystemExit as exc:
        code = int(exc.code)
    captured = capsys.readouterr()
    return code, captured.out, captured.err
