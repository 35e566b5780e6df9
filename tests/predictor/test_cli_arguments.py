"""Bad CLI arguments are usage errors (exit 2, one line naming the option) before any work;
tables keep the digits that matter; `evaluate --out` writes strict JSON."""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import pytest

from predictor.cli import main
from predictor.cli.output import column_decimals, level_label
from predictor.snapshots.reader import list_versions
from predictor.util.paths import bundled_snapshot_dir

STORE = str(bundled_snapshot_dir())
SCORES = "gpqa_diamond=80,hle=20"


@pytest.fixture(autouse=True)
def _home(benchpress_home: Path) -> Path:  # never the developer's ./.benchpress
    return benchpress_home


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("level", ["0", "1", "1.5", "nan", "-0.2", "0.9999999999999999", "x"])
@pytest.mark.parametrize(
    "command",
    [
        ["compare", "--model", f"A:{SCORES}", "--model", "B:gpqa_diamond=60", "--targets", "chat"],
        ["next", "--scores", SCORES],
        ["evaluate", "--quick", "--no-probe", "--methods", "column_mean"],
    ],
)
def test_interval_level_outside_0_1_is_a_usage_error(capsys, command, level) -> None:
    code, out, err = cli(capsys, *command, "--level", level, "--store", STORE)
    assert code == 2, err
    assert "argument --level: " in err and "(e.g. 0.9)" in err
    assert out == "" and "Traceback" not in err


def test_suspicious_threshold_must_be_positive(capsys) -> None:
    code, _, err = cli(capsys, "suspicious", "--threshold", "0", "--store", STORE)
    assert code == 2 and "--threshold: must be a positive number, got '0'" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["probes", "--allow", ""], "--allow needs at least one name, got ''"),
        (["probes", "--allow", " , ,"], "--allow needs at least one name"),
        (["probes", "--targets", ","], "--targets needs at least one name"),
        (["compare", "--model", SCORES, "--reference", ",,,"], "--reference needs at least one"),
    ],
)
def test_empty_name_lists_are_usage_errors(capsys, argv, message) -> None:
    code, _, err = cli(capsys, *argv, "--store", STORE)
    assert code == 2 and message in err


def test_allow_list_skips_empty_items(capsys) -> None:
    code, out, err = cli(
        capsys, "probes", "--k", "2", "--allow", "gpqa_diamond,,hle", "--json", "--store", STORE
    )
    assert code == 0, err
    assert sorted(json.loads(out)["benchmarks"]) == ["gpqa_diamond", "hle"]


def test_next_header_shows_the_level_without_truncation(capsys) -> None:
    code, out, _ = cli(capsys, "next", "--scores", SCORES, "--level", "0.29", "--store", STORE)
    assert code == 0
    assert "mean 29% interval width" in out.splitlines()[0]
    assert level_label(0.57) == "57%" and level_label(0.925) == "92.5%"


def test_probabilities_and_small_costs_keep_their_digits(capsys) -> None:
    code, out, _ = cli(
        capsys,
        "compare",
        "--model",
        f"A:{SCORES}",
        "--model",
        "B:gpqa_diamond=60",
        "--targets",
        "ifeval",
        "--store",
        STORE,
    )
    assert code == 0
    header, first = out.splitlines()[:2]
    assert header.split()[-1] == "p_better_than_next"
    p = first.split()[-1]
    assert len(p.split(".")[1]) == 3 and 0.5 < float(p) < 1.0  # e.g. 0.776, not 0.8
    assert first.split()[3].count(".") == 1 and len(first.split()[3].split(".")[1]) == 1  # score
    assert column_decimals([0.25, 1.0, 1.375]) == 2  # costs: 0.25 stays 0.25
    assert column_decimals([0.879, 0.741]) == 3
    assert column_decimals([88.4, 0.145, 73.3]) == 1  # one small score does not widen scores
    assert column_decimals([math.nan, None, "x"]) == 1


def test_evaluate_out_is_checked_before_the_run_and_written_as_strict_json(
    capsys, tmp_path
) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    code, out, err = cli(
        capsys, "evaluate", "--quick", "--no-probe", "--out", str(blocker / "x.json")
    )
    assert code == 2 and "--out" in err and "cannot create its folder" in err
    assert out == ""  # nothing was fitted: the check comes first
    target = tmp_path / "eval.json"
    code, _, err = cli(
        capsys,
        "evaluate",
        "--quick",
        "--no-probe",
        "--methods",
        "column_mean",
        "--out",
        str(target),
        "--no-progress",
    )
    assert code == 0, err
    text = target.read_text()
    assert "NaN" not in text and "Infinity" not in text
    results = json.loads(text, parse_constant=lambda name: pytest.fail(f"bare {name}"))
    assert results["methods"]["column_mean"]["holdout"]["coverage_50"] is None


def test_evaluate_without_methods_is_a_usage_error(capsys) -> None:
    code, _, err = cli(capsys, "evaluate", "--quick", "--methods", " , ")
    assert code == 2 and "--methods needs at least one of ours" in err


def test_evaluate_with_an_unknown_method_is_a_usage_error(capsys) -> None:
    code, _, err = cli(capsys, "evaluate", "--quick", "--methods", "foo")
    assert code == 2
    assert "--methods: unknown method 'foo'; choose from ours, ours_plain, ours_date" in err


@pytest.mark.parametrize("level", [0.9999999999999999, 0.9995, 0.005])
def test_levels_beyond_the_served_bounds_are_refused_by_the_api(level) -> None:
    """Near 1 the t quantile of (1 + level) / 2 rounds to 1: refuse with the bounds, not a
    numeric error from deep inside."""
    from predictor import BenchPress

    bp = BenchPress.load(store=STORE)
    with pytest.raises(ValueError, match=r"level must lie in 0.01-0.999"):
        bp.predict({"gpqa_diamond": 80.0}, level=level)
    assert bp.predict({"gpqa_diamond": 80.0}, level=0.999)["hle"].high > 0


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["next", "--scores", "gpqa_diamond=80,GPQA Diamond=81"], "--scores"),
        (
            ["compare", "--model", "A:gpqa_diamond=80,GPQA Diamond=81", "--model", SCORES],
            "--model",
        ),
    ],
)
def test_two_spellings_of_one_benchmark_are_a_usage_error(capsys, argv, option) -> None:
    code, out, err = cli(capsys, *argv, "--targets", "chat", "--store", STORE)
    assert code == 2 and out == ""
    assert f"{option}: gpqa_diamond is given twice (as 'gpqa_diamond' and 'GPQA Diamond')" in err


def test_compare_with_a_known_model_in_model_points_to_reference(capsys) -> None:
    """`compare --model gpt-4o` used to say `--scores: expected name=value`."""
    code, _, err = cli(capsys, "compare", "--model", "GPT4o")
    assert code == 2
    assert err.strip() == (
        "benchpress: error: --model takes a new model's scores, [NAME:]benchmark=score,..., "
        "got 'GPT4o' (gpt-4o is a known model); rank against known models with --reference GPT4o"
    )
    code, _, err = cli(capsys, "compare", "--model", "no-such-model-xyz")
    assert code == 2 and "known model" not in err.split(";")[0]
    assert "rank against known models with --reference no-such-model-xyz" in err


def test_version_says_what_is_installed_and_where_state_lives(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHPRESS_HOME", str(tmp_path / "team"))
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("benchpress-llm ")
    assert lines[1] == "bundled snapshot: 2026.12.07.3"
    assert lines[2] == f"state: {(tmp_path / 'team').resolve()} (set by BENCHPRESS_HOME)"


def test_predict_table_keeps_one_decimal_has_units_and_counts_right(capsys) -> None:
    code, out, _ = cli(
        capsys, "predict", "--scores", "gpqa_diamond=80%,hle=20", "--targets", "mmlu_pro"
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "snapshot 2026.12.07.3: 1 benchmark, 90% intervals"
    assert lines[1].split() == [
        "benchmark", "score", "90%", "interval", "unit", "P(|err|<=5)", "kind",
    ]  # fmt: skip
    for level in ("0.5", "0.9"):
        code, out, _ = cli(
            capsys, "predict", "--scores", "gpqa_diamond=80,hle=20", "--level", level,
            "--targets", "mmlu_pro,chatbot_arena_elo",
        )  # fmt: skip
        assert out.splitlines()[1].split()[2:4] == [f"{float(level):.0%}", "interval"]
        rows = {line.split()[0]: line.split() for line in out.splitlines()[2:]}
        for name, unit in (("mmlu_pro", "percent"), ("chatbot_arena_elo", "elo")):
            score, interval = rows[name][1:3]
            low, high = interval.split("-")
            assert all(len(v.split(".")[1]) == 1 for v in (score, low, high)), rows[name]
            assert rows[name][3] == unit


def test_a_model_name_given_as_a_probe_is_said_to_be_a_model(capsys) -> None:
    code, _, err = cli(capsys, "predict", "--scores", "GPT-4o=80")
    assert code == 2
    assert "'GPT-4o' is a model (gpt-4o), not a benchmark" in err and "gso" not in err


@pytest.mark.parametrize(
    "argv",
    [("probes", "--budget", "0.1"), ("next", "--scores", "gpqa_diamond=80", "--budget", "0.01")],
)
def test_a_budget_below_every_candidate_is_a_usage_error(capsys, argv) -> None:
    code, _, err = cli(capsys, *argv)
    assert code == 2 and "is below the cheapest" in err


def test_snapshots_show_is_a_summary_and_json_the_manifest(capsys) -> None:
    code, out, _ = cli(capsys, "snapshots", "show")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("snapshot 2026.12.07.3 (verified), published ")
    assert "  matrix: 5,339 models x 288 benchmarks, 37,537 cells, 480 conflicts" in lines
    assert len(lines) <= 15
    code, out, _ = cli(capsys, "snapshots", "show", "--json")
    assert json.loads(out)["counts"]["models"] == 5339


def test_a_version_in_two_stores_is_listed_once(capsys, tmp_path, monkeypatch) -> None:
    """A local publish reusing the bundled name for identical content used to list twice."""
    home = Path(os.environ["BENCHPRESS_HOME"])
    version = list_versions(bundled_snapshot_dir())[0]
    shutil.copytree(bundled_snapshot_dir() / version, home / "snapshots" / version)
    code, out, _ = cli(capsys, "snapshots", "list", "--json")
    rows = [r for r in json.loads(out) if r["version"] == version]
    assert len(rows) == 1 and rows[0]["store"] == str((home / "snapshots").resolve())
