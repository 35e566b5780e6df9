"""Answers that stay honest (issue "Everyday use, round 3"): fraction-like scores named,
tidy fractions converted as the docs say, a comparison that prints and says when its
references come from another snapshot, `private:NAME` references everywhere, one model's
files compared with default references, and the small things the CLI said wrong or not at all.

Everything runs against the bundled snapshot in a fresh home, through `benchpress` in-process
or the Python API."""

from __future__ import annotations

import contextlib
import io
import json
import warnings
from pathlib import Path

import pytest

from predictor import BenchPress, FractionScoresWarning
from predictor.cli import main
from predictor.snapshots.reader import list_versions
from predictor.trust import default_references
from predictor.util.paths import bundled_snapshot_dir
from tests.support.cli_runs import STORE, bundled_cli

FRACTION_LINE = (
    "benchpress: warning: gpqa_diamond=0.8 looks like a fraction beside percent scores "
    "(hle=20, mmlu_pro=80): scores are percentages (0-100); give gpqa_diamond=80 if 0.8 is a "
    "fraction"
)


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(store=STORE)


@pytest.fixture(autouse=True)
def _home(benchpress_home: Path) -> Path:  # private models and catalogue: a fresh home
    return benchpress_home


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------ fractions
def test_a_fraction_beside_percent_scores_is_named(capsys, bp: BenchPress) -> None:
    code, out, err = bundled_cli(
        capsys, "predict", "--scores", "gpqa_diamond=0.8,hle=20,mmlu_pro=80", "--targets", "hle"
    )
    assert code == 0 and err.splitlines() == [FRACTION_LINE]
    assert "gpqa_diamond" not in out  # the answer itself is unchanged: a warning, not a guess
    with pytest.warns(FractionScoresWarning) as caught:
        bp.predict({"gpqa_diamond": 0.8, "hle": 0.5, "mmlu_pro": 80})
    assert [str(w.message) for w in caught] == [
        "gpqa_diamond=0.8 looks like a fraction beside percent scores (mmlu_pro=80): scores "
        "are percentages (0-100); give gpqa_diamond=80 if 0.8 is a fraction",
        "hle=0.5 looks like a fraction beside percent scores (mmlu_pro=80): scores are "
        "percentages (0-100); give hle=50 if 0.5 is a fraction",
    ]
    with warnings.catch_warnings():  # open scales are never looked at: 0.5 minutes is 0.5
        warnings.simplefilter("error", FractionScoresWarning)
        bp.predict({"metr_time_horizon": 0.5, "gpqa_diamond": 70, "hle": 0})


def test_a_tidy_table_of_fractions_is_converted_and_says_so(
    capsys, bp: BenchPress, tmp_path: Path
) -> None:
    table = "model,benchmark,score\nm,gpqa_diamond,0.7\nm,hle,0.15\nm,MMLU-Pro,0.75\n"
    path = _write(tmp_path / "scores.csv", table + "m,metr_time_horizon,0.5\n")
    code, out, err = bundled_cli(capsys, "predict", "--from", str(path), "--targets", "aime_2025")
    assert code == 0
    assert err.splitlines() == [
        f"benchpress: warning: {path}: every percent score is at most 1 (gpqa_diamond=0.7, "
        "hle=0.15, mmlu_pro=0.75): read as fractions and converted to percent (x100)"
    ]
    assert out.splitlines()[0] == (
        "read 1 file (tidy) for m: 4 scores used: gpqa_diamond=70, hle=15, mmlu_pro=75, "
        "metr_time_horizon=0.5"
    )
    with pytest.warns(FractionScoresWarning, match="converted to percent"):
        frame = bp.read_results(path)
    rows = frame.select("benchmark_id", "score", "raw_score", "unit").rows()
    assert [(b, round(s, 6), r, u) for b, s, r, u in rows] == [
        ("gpqa_diamond", 70.0, 0.7, "fraction"),
        ("hle", 15.0, 0.15, "fraction"),
        ("mmlu_pro", 75.0, 0.75, "fraction"),
        ("metr_time_horizon", 0.5, 0.5, "value"),  # minutes: never a fraction
    ]
    assert bp.on_snapshot(frame).equals(frame)  # converted once, not again
    with pytest.warns(FractionScoresWarning):
        from_file = bp.predict(path)["aime_2025"].score
    scores = {"gpqa_diamond": 70.0, "hle": 15.0, "mmlu_pro": 75.0, "metr_time_horizon": 0.5}
    assert from_file == pytest.approx(bp.predict(scores)["aime_2025"].score)


def test_a_tidy_table_mixing_fractions_and_percentages_is_kept_and_warned(
    capsys, tmp_path: Path
) -> None:
    path = _write(tmp_path / "mixed.csv", "model,benchmark,score\nm,gpqa_diamond,0.8\nm,hle,20\n")
    code, out, err = bundled_cli(capsys, "predict", "--from", str(path), "--targets", "hle")
    assert code == 0 and "2 scores used: gpqa_diamond=0.8, hle=20" in out
    assert err.splitlines() == [
        "benchpress: warning: gpqa_diamond=0.8 looks like a fraction beside percent scores "
        "(hle=20): scores are percentages (0-100); give gpqa_diamond=80 if 0.8 is a fraction"
    ]


# ------------------------------------------------------------------ comparisons
def test_the_article_comparison_prints_and_says_its_references_mix_snapshots() -> None:
    bp = BenchPress.from_pretrained("microsoft/benchpress-v1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the article's probes the paper matrix lacks
        predictions = bp.predict({"mmlu": 78.3, "gsm8k": 85.1, "humaneval": 72.4})
    comparison = bp.compare_with_known_models(
        predictions, reference_models=["claude-fable-5", "gpt-5-5"]
    )
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        print(comparison)
    lines = printed.getvalue().splitlines()
    catalogue = list_versions(bundled_snapshot_dir())[-1]
    assert lines[0] == "new model among 2 reference models (90% intervals):"
    assert lines[3] == (
        "  mixed snapshots: new model is predicted in snapshot microsoft/benchpress-v1, but "
        f"claude-fable-5@xhigh is not in it: its scores come from snapshot {catalogue} "
        "(another matrix and fit); compare with care"
    )
    marked = [line for line in lines if line.startswith("      vs claude-fable-5@xhigh ")]
    assert len(marked) == 5 and all(m.endswith(f"  (snapshot {catalogue})") for m in marked)
    assert printed.getvalue() == comparison.summary() + "\n" and repr(comparison) == str(comparison)
    pair = bp.compare_models([{"gsm8k": 85.1}, {"gsm8k": 60.0}], target_benchmarks=["math"])
    assert str(pair) == pair.summary() and str(pair).startswith("math: model_")


# ------------------------------------------------------------------ private references
@pytest.fixture
def private_model(capsys, tmp_path: Path) -> str:
    table = "model,benchmark,score\nteam-7b,gpqa_diamond,48\nteam-7b,mmlu_pro,61\nteam-7b,hle,9\n"
    path = _write(tmp_path / "team.csv", table)
    assert main(["models", "add", "team-7b", "--from", str(path), "--store", STORE]) == 0
    capsys.readouterr()
    return "team-7b"


def test_private_name_works_as_a_reference_everywhere(
    capsys, bp: BenchPress, private_model: str
) -> None:
    argv = ["compare", "--model", "A:gpqa_diamond=80,hle=20", "--targets", "gpqa_diamond"]
    code, out, err = bundled_cli(capsys, *argv, "--reference", "private:team-7b")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "A among 1 reference model (90% intervals):"
    assert "      vs team-7b (48.0, observed): P(better) = 1.00  (private)" in out.splitlines()
    # a second --reference adds to the first, never replaces it
    code, out, err = bundled_cli(
        capsys, *argv, "--reference", "private:team-7b", "--reference", "gpt-4o"
    )
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "A among 2 reference models (90% intervals):"
    assert sum(" vs team-7b (" in line for line in out.splitlines()) == 1
    known = bp.compare_with_known_models(
        {"gpqa_diamond": 80}, ["private:team-7b", "gpt-4o"], targets=["gpqa_diamond"]
    )
    assert known.private == frozenset({"team-7b"})
    assert known.to_frame()["reference_model"].sort().to_list() == ["gpt-4o", "team-7b"]
    # what `--model private:team-7b` tells the user to do works
    code, _, err = bundled_cli(capsys, "compare", "--model", "private:team-7b")
    assert code == 2 and err.strip().endswith("with --reference private:team-7b")


def test_an_unknown_reference_is_an_error_naming_it(capsys, private_model: str) -> None:
    argv = ["compare", "--model", "A:gpqa_diamond=80", "--targets", "gpqa_diamond"]
    code, out, err = bundled_cli(capsys, *argv, "--reference", "gpt-4o,private:team-8b")
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        "benchpress: error: unknown private model 'team-8b'; private models: team-7b; "
        "did you mean: private:team-7b?"
    ]
    code, _, err = bundled_cli(capsys, *argv, "--reference", "gpt-4o", "--reference", "team-8b")
    assert code == 2
    assert err.startswith("benchpress: error: unknown model 'team-8b'; did you mean: ")
    assert "private:team-7b" in err.split("did you mean: ")[1]


# ------------------------------------------------------------------ compare one model's files
def test_compare_on_one_models_files_uses_the_default_references(
    capsys, bp: BenchPress, tmp_path: Path
) -> None:
    folder = tmp_path / "results"
    _write(folder / "mine.csv", "model,benchmark,score\nmine,gpqa_diamond,70\nmine,hle,15\n")
    code, out, err = bundled_cli(capsys, "compare", "--from", str(folder), "--targets", "reasoning")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[2] == (
        "the files hold one model and no --reference was given: ranking mine among the "
        "snapshot models observed on the most targets, newest first among equals "
        "(--reference NAME,... chooses others)"
    )
    assert lines[3] == "mine among 5 reference models (90% intervals):"
    refs = default_references(bp, "reasoning")
    assert sorted(refs) == [
        "gemma-3-1b-it",
        "gpt-5",
        "llama-3.2-1b-instruct",
        "ministral-8b",
        "qwq-32b",
    ]
    code, out, _ = bundled_cli(
        capsys, "compare", "--from", str(folder), "--targets", "reasoning", "--json"
    )
    payload = json.loads(out)
    assert code == 0 and payload["references"]["models"] == refs
    assert {r["reference_model"] for r in payload["rows"]} == set(refs)


# ------------------------------------------------------------------ small honest things
def test_probes_say_when_the_budget_stopped_them(capsys) -> None:
    code, out, _ = bundled_cli(
        capsys, "probes", "--k", "5", "--budget", "8", "--targets", "reasoning"
    )
    assert code == 0
    assert (
        "3 of the 5 probes asked for: the budget 8 stopped the search (7.91 spent; every other "
        "candidate costs more than the 0.09 left); raise the budget for more"
    ) in out.splitlines()


def test_next_from_the_results_folder_suggests_reading_it_once(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "results" / "mine.csv", "model,benchmark,score\nmine,gpqa_diamond,70\n")
    monkeypatch.chdir(tmp_path)
    code, out, _ = bundled_cli(capsys, "next", "--from", "results/", "--targets", "reasoning")
    assert code == 0
    lines = out.splitlines()
    assert lines[lines.index("then predict from what they write:") + 1] == (
        "  benchpress predict --from results/"
    )


def test_benchmark_aliases_are_echoed(capsys) -> None:
    code, out, _ = bundled_cli(
        capsys, "predict", "--scores", "gpqa=80,hle=20", "--targets", "aime_2025"
    )
    assert code == 0 and out.splitlines()[0] == "benchmark gpqa = gpqa_diamond"
    code, out, _ = bundled_cli(
        capsys, "next", "--scores", "GPQA Diamond=80", "--targets", "reasoning"
    )
    assert code == 0 and out.splitlines()[0] == "benchmark GPQA Diamond = gpqa_diamond"


def test_close_names_include_the_benchmarks_that_contain_the_name(capsys) -> None:
    code, out, err = bundled_cli(capsys, "predict", "--scores", "swe_bench=50")
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        "benchpress: error: unknown benchmark 'swe_bench'; did you mean: swe_bench_pro, "
        "swe_bench_verified, swe_bench_multilingual, swe_bench_verified_bash_only, "
        "multi_swe_bench?"
    ]


def test_a_private_models_stored_standard_errors_are_its_noise(
    capsys, bp: BenchPress, tmp_path: Path
) -> None:
    """A private model's scores stored with their standard errors (the file's) are
    measurements with that noise, as a new model's probes are: against it, P(better) and the
    stated noise use them, not the benchmark's default."""
    table = (
        "model,benchmark,score,stderr\n"
        "team-noisy,gpqa_diamond,48,6.0\n"
        "team-noisy,mmlu_pro,61,\n"
        "team-noisy,hle,9,\n"
    )
    path = _write(tmp_path / "noisy.csv", table)
    assert main(["models", "add", "team-noisy", "--from", str(path), "--store", STORE]) == 0
    capsys.readouterr()
    from predictor.private import private_models

    (found,) = [m for m in private_models() if m.name == "team-noisy"]
    assert found.stderr == {"gpqa_diamond": 6.0}
    known = bp.compare_with_known_models(
        {"gpqa_diamond": 52.0}, ["private:team-noisy"], targets=["gpqa_diamond"]
    )
    noise = {(row["model"], row["benchmark"]): row["sd"] for row in known.measurement_noise()}
    assert noise[("team-noisy", "gpqa_diamond")] == 6.0
    (ranking,) = known.rankings
    p = ranking.p_matrix[("new model", "team-noisy")]
    assert 0.6 < p < 0.8  # 4 points apart, 6 (and the default ~1) of noise: far from certain
