"""`benchpress compare | probes | next | suspicious` through `predictor.cli.trust.register`."""

from __future__ import annotations

import argparse
import json

import pytest

from predictor.cli import trust as cli_trust
from predictor.util.paths import bundled_snapshot_dir


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    cli_trust.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args([*argv, "--store", str(bundled_snapshot_dir())])
    return args.func(args)


def test_compare_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = _run(
        [
            "compare",
            "--model",
            "A:gpqa_diamond=80,hle=20",
            "--model",
            "B:gpqa_diamond=40,hle=5",
            "--targets",
            "chat",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and {r["model"] for r in out["rows"]} == {"A", "B"}
    assert all(0 <= r["p_a_better"] <= 1 for r in out["pairwise"])


def test_compare_reference_and_next_and_suspicious_tables(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        _run(
            [
                "compare",
                "--model",
                "gpqa_diamond=80",
                "--reference",
                "claude-3-opus",
                "--targets",
                "ifeval",
            ]
        )
        == 0
    )
    assert "P(better)" in capsys.readouterr().out
    assert (
        _run(["next", "--scores", "gpqa_diamond=80,hle=20", "--targets", "reasoning", "--top", "3"])
        == 0
    )
    assert "reduction_per_cost" in capsys.readouterr().out
    assert _run(["suspicious", "--threshold", "8", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert rows and all(abs(r["z"]) > 8 for r in rows if r["reason"] == "residual")


def test_probes_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        _run(
            [
                "probes",
                "--k",
                "2",
                "--targets",
                "chat",
                "--allow",
                "gpqa_diamond,mmlu_pro,ifeval,hle",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "expected_medae" in out and "step" in out
