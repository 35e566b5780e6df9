"""`benchpress track`'s P(all) per checkpoint and its first checkpoint meeting the criteria,
pinned as LITERAL numbers for the scenario of test_track.py (five lm-eval checkpoints of
run-a, steps 100-500, on the bundled snapshot): test_track.py recomputes them with the very
functions under test (`tracking.joint_probability`, `tracking.first_meeting`), so a bug in
those functions moves both sides together; here they are fixed numbers.

How the literals were obtained (once, with the code of 2026-12-07, snapshot 2026.12.07.3): the
scenario of test_track.py's `test_track_prints_each_checkpoint_as_predict_does` run through
`benchpress track run-a --from GLOB --targets mmlu_pro,gpqa_diamond,ifeval --require R
[--json]`, R = `criteria_for(bp, run_files)` (the middle checkpoint's predicted medians) and a
second, looser R that the run meets from step 400 on; the printed and JSON values copied
here. P(all) counts 4000 seeded draws (steps of 0.00025); the tolerance of 0.002 allows a
handful of draws to cross a threshold on another CPU's BLAS, nothing more."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from predictor import BenchPress
from predictor.cli import main
from tests.warehouse.test_track import GLOB, STEPS, TARGETS, criteria_for, write_run

SNAPSHOT = "2026.12.07.3"
TOL = 0.002

# the scenario of test_track.py: thresholds at the middle checkpoint's predicted medians
AT_THE_MEDIANS = "mmlu_pro>=49.5,gpqa_diamond>=29.5"
P_ALL = [0.04475, 0.14875, 0.39225, 0.68575, 0.86175]
P_EACH = {
    100: [0.08025, 0.079],
    200: [0.222, 0.22525],
    300: [0.50075, 0.4905],
    400: [0.77575, 0.7595],
    500: [0.9065, 0.906],
}
# looser thresholds: P(all) reaches 0.9 at step 400
LOOSER = "mmlu_pro>=43.3,gpqa_diamond>=21.5"
P_ALL_LOOSER = [0.22825, 0.54275, 0.80775, 0.9195, 0.96575]


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    bench = BenchPress.load()
    if bench.version != SNAPSHOT:
        pytest.fail(f"the literals are for snapshot {SNAPSHOT}, not {bench.version}: redo them")
    return bench


@pytest.fixture
def run_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[int, Path]:
    monkeypatch.chdir(tmp_path)
    return write_run(tmp_path)


def track(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["track", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def printed_p_all(out: str) -> tuple[list[str], list[float], list[str]]:
    lines = out.splitlines()
    table = [re.split(r"\s{2,}", line.strip()) for line in lines[2:8]]
    assert table[0] == ["step", "probes", *TARGETS, "P(all)"]
    return [row[0] for row in table[1:]], [float(row[-1]) for row in table[1:]], lines[10:]


def test_the_scenario_s_criteria_are_the_pinned_ones(
    bp: BenchPress, run_files: dict[int, Path]
) -> None:
    assert criteria_for(bp, run_files) == AT_THE_MEDIANS


def test_p_all_and_the_first_checkpoint_are_the_pinned_numbers(
    benchpress_home: Path, run_files: dict[int, Path], capsys, bp: BenchPress
) -> None:
    code, out, err = track(capsys, "run-a", "--from", GLOB, "--targets", ",".join(TARGETS),
                           "--require", AT_THE_MEDIANS)  # fmt: skip
    assert (code, err) == (0, "")
    steps, p_all, tail = printed_p_all(out)
    assert steps == ["100", "200", "300", "400", "500"]
    assert p_all == pytest.approx(P_ALL, abs=TOL)
    assert tail == [
        "P(all) = P(mmlu_pro>=49.5, gpqa_diamond>=29.5), joint over 4000 predictive draws per "
        "checkpoint",
        "first checkpoint with P >= 0.9: none yet",
    ]

    code, out, _ = track(capsys, "run-a", "--from", GLOB, "--require", AT_THE_MEDIANS, "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["criteria"] == ["mmlu_pro>=49.5", "gpqa_diamond>=29.5"]
    assert [c["step"] for c in payload["checkpoints"]] == list(STEPS)
    assert [c["p_all"] for c in payload["checkpoints"]] == pytest.approx(P_ALL, abs=TOL)
    for checkpoint in payload["checkpoints"]:
        assert list(checkpoint["p_each"]) == ["mmlu_pro>=49.5", "gpqa_diamond>=29.5"]
        assert list(checkpoint["p_each"].values()) == pytest.approx(
            P_EACH[checkpoint["step"]], abs=TOL
        )
    assert payload["first_step_meeting"] is None
    assert payload["meet_probability"] == 0.9


def test_the_first_checkpoint_meeting_looser_criteria_is_step_400(
    benchpress_home: Path, run_files: dict[int, Path], capsys, bp: BenchPress
) -> None:
    code, out, err = track(capsys, "run-a", "--from", GLOB, "--targets", ",".join(TARGETS),
                           "--require", LOOSER)  # fmt: skip
    assert (code, err) == (0, "")
    _, p_all, tail = printed_p_all(out)
    assert p_all == pytest.approx(P_ALL_LOOSER, abs=TOL)
    assert tail == [
        "P(all) = P(mmlu_pro>=43.3, gpqa_diamond>=21.5), joint over 4000 predictive draws per "
        "checkpoint",
        "first checkpoint with P >= 0.9: step 400",
    ]
    code, out, _ = track(capsys, "run-a", "--from", GLOB, "--require", LOOSER, "--json")
    assert code == 0
    payload = json.loads(out)
    assert [c["p_all"] for c in payload["checkpoints"]] == pytest.approx(P_ALL_LOOSER, abs=TOL)
    assert payload["first_step_meeting"] == 400
