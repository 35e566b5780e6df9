"""`--name`, `--family`, `--release-date` on `predict`, `next` and `compare`: the model's side
information reaches the fold-in, and the answer says which family and date were used."""

from __future__ import annotations

import json

import pytest

from tests.support.cli_runs import bundled_cli

SCORES = "gpqa_diamond=80,hle=20,mmlu_pro=80"


cli = bundled_cli


def test_predict_with_a_name_uses_and_says_its_family(capsys) -> None:
    argv = ("predict", "--scores", SCORES, "--targets", "swe_bench_verified")
    code, out, _ = cli(capsys, *argv, "--name", "claude-opus-4.5-preview")
    assert code == 0
    lines = out.splitlines()
    assert lines[-1] == ("model: family claude4.5, release date 2026-07-01 (newest in the fit)")
    assert "swe_bench_verified  77.6" in out
    code, plain, _ = cli(capsys, *argv)
    assert "swe_bench_verified  74.1" in plain and "family" not in plain


def test_predict_json_carries_the_side_information(capsys) -> None:
    code, out, _ = cli(
        capsys, "predict", "--scores", SCORES, "--release-date", "2024-01-01", "--json"
    )
    assert code == 0
    answer = json.loads(out)
    assert answer["side"] == {
        "model": None,
        "family": None,
        "family_known": False,
        "release_date": "2024-01-01",
        "release_date_source": "given",
    }
    swe = next(p for p in answer["predictions"] if p["benchmark"] == "swe_bench_verified")
    assert round(swe["score"], 1) == 33.2


def test_a_bad_release_date_is_a_usage_error(capsys) -> None:
    code, out, err = cli(capsys, "predict", "--scores", SCORES, "--release-date", "2025-13-40")
    assert code == 2 and out == ""
    assert "release_date must be a date (YYYY-MM-DD), got '2025-13-40'" in err


def test_next_and_compare_take_the_name(capsys) -> None:
    code, out, _ = cli(capsys, "next", "--scores", SCORES, "--name", "o3-pro", "--top", "2")
    assert code == 0 and "model: family o3, release date 2026-07-01 (newest in the fit)" in out
    code, out, _ = cli(
        capsys,
        "compare",
        "--model",
        f"claude-opus-4.5-preview:{SCORES}",
        "--reference",
        "o3-high",
        "--targets",
        "swe_bench_verified",
        "--json",
    )
    assert code == 0
    assert json.loads(out)["side"]["family"] == "claude4.5"
    code, _, err = cli(
        capsys,
        "compare",
        "--model",
        f"a:{SCORES}",
        "--model",
        f"b:{SCORES}",
        "--targets",
        "swe_bench_verified",
        "--family",
        "gpt5",
    )
    assert code == 2 and "--name, --family and --release-date describe the one model" in err


@pytest.mark.parametrize("option", ["--name", "--family"])
def test_an_empty_name_is_a_usage_error(capsys, option: str) -> None:
    code, out, err = cli(capsys, "predict", "--scores", SCORES, option, " ")
    assert code == 2 and out == ""
    assert f"argument {option}: must not be empty" in err
