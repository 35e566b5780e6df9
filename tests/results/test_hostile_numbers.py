"""Hostile numbers in results files: counts past Int64 or below zero, integer literals too
long for Python to convert. Each is one ResultsError naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from predictor.results import ResultsError, read_results
from tests.support.cli_runs import bundled_cli

EEE_RECORDS = Path(__file__).resolve().parent.parent / "fixtures" / "eval_formats" / "eee"

BIG = 10**30


def lm_eval(effective: int) -> dict:
    return {
        "results": {"arc_easy": {"acc,none": 0.5}},
        "n-samples": {"arc_easy": {"original": 10, "effective": effective}},
        "model_name": "m",
        "lm_eval_version": "0.4.9",
    }


def refusal(tmp_path, text: str, name: str = "results.json") -> tuple:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ResultsError) as caught:
        read_results([path])
    return path, str(caught.value)


@pytest.mark.parametrize("effective", [BIG, -5])
def test_an_lm_eval_sample_count_out_of_range_is_refused(tmp_path, effective) -> None:
    path, message = refusal(tmp_path, json.dumps(lm_eval(effective)))
    assert message == (
        f"{path}, n-samples.arc_easy.effective: a count must be a whole number from 0 to "
        f"9223372036854775807, got {effective}"
    )


@pytest.mark.parametrize("n", ["1e300", "-5"])
def test_a_tidy_count_out_of_range_is_refused(tmp_path, n) -> None:
    path, message = refusal(tmp_path, f"model,benchmark,score,n\nm,gpqa_diamond,50,{n}\n", "t.csv")
    assert message.startswith(f"{path}, line 2: n must be a whole number from 0 to ")


def test_a_5000_digit_literal_names_the_file_and_place(tmp_path) -> None:
    doc = json.dumps(lm_eval(10)).replace('"effective": 10', '"effective": ' + "9" * 5000)
    path, message = refusal(tmp_path, doc)
    assert message == (
        f"{path}: an integer of 5000 digits at line 1 column 102: more than the 4300 digits a "
        "number may have"
    )


def test_the_cli_prints_a_count_past_int64_as_one_line(capsys, benchpress_home, tmp_path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(lm_eval(BIG)))
    code, out, err = bundled_cli(capsys, "predict", "--from", str(path))
    assert (code, out) == (2, "")
    assert err == (
        f"benchpress: error: {path}, n-samples.arc_easy.effective: a count must be a whole "
        f"number from 0 to 9223372036854775807, got {BIG}\n"
    )


@pytest.mark.parametrize("fmt", ["tidy", "eee"])
def test_a_key_given_twice_is_refused(tmp_path, fmt) -> None:
    """JSON keeps the last of two values under one key: a merged or hand-edited file would
    silently lose the first, so it is refused naming the key."""
    if fmt == "tidy":
        text = '{"scores": [{"model": "m", "benchmark": "mmlu", "score": 70, "score": 80}]}'
    else:
        source = sorted((EEE_RECORDS / "records").rglob("*.json"))[0]
        record = json.loads(source.read_text(encoding="utf-8"))
        body = json.dumps(record)
        text = body[:-1] + ', "evaluation_id": "twice/again"}'
    path = tmp_path / f"{fmt}.json"
    path.write_text(text, encoding="utf-8")
    key = "score" if fmt == "tidy" else "evaluation_id"
    with pytest.raises(ResultsError, match=f"the key '{key}' is given twice in one object"):
        read_results([path])


@pytest.mark.parametrize("stderr", ["NaN", "Infinity", "-0.5"])
def test_an_lm_eval_stderr_that_is_not_a_finite_non_negative_number_is_refused(
    tmp_path, stderr
) -> None:
    """lm-eval writes 'N/A' where it cannot compute a standard error: NaN, infinity or a
    negative value is a damaged file, refused naming the field (no longer read as 'none')."""
    doc = json.dumps(lm_eval(10)).replace(
        '"acc,none": 0.5}', f'"acc,none": 0.5, "acc_stderr,none": {stderr}}}'
    )
    path, message = refusal(tmp_path, doc)
    shown = {"NaN": "nan", "Infinity": "inf", "-0.5": "-0.5"}[stderr]
    assert message == (
        f"{path}, results.arc_easy.acc_stderr,none: a standard error must be a finite number "
        f"of at least 0 or 'N/A', got {shown} (was the file edited by hand? re-export it from "
        "the run)"
    )


@pytest.mark.parametrize("stderr", [float("nan"), float("inf"), -1.0])
def test_an_eee_stderr_that_is_not_finite_names_its_json_path(tmp_path, stderr) -> None:
    source = sorted((EEE_RECORDS / "records").rglob("*.json"))[0]
    record = json.loads(source.read_text(encoding="utf-8"))
    record["evaluation_results"][0]["score_details"]["uncertainty"] = {
        "standard_error": {"value": stderr}
    }
    path, message = refusal(tmp_path, json.dumps(record), "eee.json")
    assert message == (
        f"{path}, evaluation_results[0].score_details.uncertainty.standard_error.value: a "
        f"standard error must be a finite number of at least 0, got {stderr!r}"
    )
