"""`--name`, `--family`, `--release-date`, `--base` on `predict`, `next` and `compare`: the
model's side information reaches the fold-in, and the answer says what was used and why."""

from __future__ import annotations

import json

import pytest

from tests.support.cli_runs import bundled_cli

SCORES = "gpqa_diamond=80,hle=20,mmlu_pro=80"


cli = bundled_cli


def test_predict_says_what_it_used_and_why(capsys) -> None:
    argv = ("predict", "--scores", SCORES, "--targets", "swe_bench_verified")
    code, out, _ = cli(capsys, *argv, "--name", "openai/gpt-4o")
    assert code == 0
    assert out.splitlines()[-1] == (
        "model: known model gpt-4o: family gpt4o, release date 2024-11-20 (catalogue)"
    )
    code, out, _ = cli(capsys, *argv, "--name", "qwen3-32b-sft-v2")
    assert code == 0 and out.splitlines()[-1].startswith(
        "model: base qwen3-32b (fine-tune, from the name): family qwen3, release date "
    )
    code, out, _ = cli(capsys, *argv, "--name", "our-model", "--base", "qwen3-32b")
    assert code == 0 and out.splitlines()[-1].startswith("model: base qwen3-32b (given): ")
    code, plain, _ = cli(capsys, *argv)
    assert code == 0
    last = plain.splitlines()[-1]
    assert last.startswith(
        "model: no family (no model name given), release date inferred from the probes: "
    )
    assert last.endswith(" months")


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
        "basis": "no name",
        "known_model": None,
        "base_model": None,
        "derivation": None,
        "release_date_sd_months": None,
        "note": None,
        "reason": "no family (no model name given), release date 2024-01-01 (given)",
    }


def test_a_bad_release_date_is_a_usage_error(capsys) -> None:
    code, out, err = cli(capsys, "predict", "--scores", SCORES, "--release-date", "2025-13-40")
    assert code == 2 and out == ""
    assert "release_date must be a date (YYYY-MM-DD), got '2025-13-40'" in err


def test_next_and_compare_take_the_name(capsys) -> None:
    code, out, _ = cli(capsys, "next", "--scores", SCORES, "--name", "o3-pro", "--top", "2")
    assert code == 0
    assert "model: known model o3-pro@high: family o3, release date 2025-06-10 (catalogue)" in out
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
    assert code == 2 and "--name, --family, --release-date and --base describe the one model" in err


@pytest.mark.parametrize("option", ["--name", "--family"])
def test_an_empty_name_is_a_usage_error(capsys, option: str) -> None:
    code, out, err = cli(capsys, "predict", "--scores", SCORES, option, " ")
    assert code == 2 and out == ""
    assert f"argument {option}: must not be empty" in err
