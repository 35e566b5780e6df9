"""CLI tables show an interval as its two ends (`90% interval` `45.0-97.8`), not a
`±` half-width, which reads as symmetric where near a bound it is far from it; `--json`
keeps `low` and `high`."""

from __future__ import annotations

import json

from predictor.cli import main
from predictor.cli.output import interval_text

SCORES = ("--scores", "gpqa_diamond=80,mmlu_pro=74", "--targets", "arena_hard,mmlu_pro")


def run(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_predict_prints_the_interval_as_low_high_of_the_json(capsys) -> None:
    payload = json.loads(run(capsys, "predict", *SCORES, "--json"))
    rows = {p["benchmark"]: p for p in payload["predictions"]}
    arena = rows["arena_hard"]
    assert arena["high"] - arena["score"] < arena["score"] - arena["low"]  # not symmetric
    lines = run(capsys, "predict", *SCORES, "--level", "0.8").splitlines()
    assert lines[1].split() == [
        "benchmark", "score", "80%", "interval", "unit", "P(|err|<=5)", "kind"
    ]  # fmt: skip
    table = run(capsys, "predict", *SCORES).splitlines()
    assert "±" not in "\n".join(table[:4])  # (the model line gives its date ± months)
    cells = {line.split()[0]: line.split() for line in table[2:4]}
    assert cells["arena_hard"][1:4] == [
        f"{arena['score']:.1f}",
        f"{arena['low']:.1f}-{arena['high']:.1f}",
        "percent",
    ]
    assert cells["mmlu_pro"] == ["mmlu_pro", "74.0", "percent", "probe"]  # a probe: no interval


def test_an_interval_with_a_negative_end_is_written_with_to() -> None:
    assert interval_text(35.46, 100.0) == "35.5-100.0"
    assert interval_text(-5.0, 12.04) == "-5.0 to 12.0"
