"""P(best) and expected rank in comparisons (`predictor.trust.standings`): per benchmark and
across a target profile, in `compare_models`, `benchpress compare` (table, summary, --json)
and `/api/compare` (with the P(A > B) matrix and an ambiguous name's variants)."""

from __future__ import annotations

import json
import math
from statistics import NormalDist

import numpy as np
import pytest

from predictor import BenchPress
from predictor.cli import main
from predictor.trust.rankings import Comparison, Entry, compare_models, rank_entries
from predictor.util.paths import bundled_snapshot_dir
from predictor.web.api import handle
from predictor.web.catalog import Catalog
from predictor.web.errors import ApiError

STORE = str(bundled_snapshot_dir())
# five candidates a team weighs: close probe scores, so every coding target is one tie group
CANDIDATES = {
    "a": {"gpqa_diamond": 70, "mmlu_pro": 75},
    "b": {"gpqa_diamond": 72, "mmlu_pro": 74},
    "c": {"gpqa_diamond": 68, "mmlu_pro": 77},
    "d": {"gpqa_diamond": 71, "mmlu_pro": 73},
    "e": {"gpqa_diamond": 69, "mmlu_pro": 76},
}


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(store=STORE)


@pytest.fixture(scope="module")
def five(bp: BenchPress) -> Comparison:
    return compare_models(bp, list(CANDIDATES.values()), "coding_assistant", names=list(CANDIDATES))


def exact_p_best(means: list[float], sds: list[float]) -> list[float]:
    """P(model i is best) of independent normals by quadrature: the integral of its density
    times every other model's P(below x)."""
    out = []
    for i, (m, s) in enumerate(zip(means, sds, strict=True)):
        x = np.linspace(m - 9 * s, m + 9 * s, 20001)
        density = np.exp(-0.5 * ((x - m) / s) ** 2) / (s * math.sqrt(2 * math.pi))
        below = np.ones_like(x)
        for j, (mj, sj) in enumerate(zip(means, sds, strict=True)):
            if j != i:
                below *= np.vectorize(NormalDist(mj, sj).cdf)(x)
        out.append(float(np.trapezoid(density * below, x)))
    return out


def test_p_best_of_independent_normals_matches_the_integral() -> None:
    means, sds = [80.0, 78.0, 75.0, 70.0], [3.0, 4.0, 2.0, 6.0]
    entries = [Entry(n, m, s, m - 5, m + 5) for n, m, s in zip("wxyz", means, sds, strict=True)]
    frame = Comparison([rank_entries("bench", entries)], 0.9).to_frame().sort("model")
    exact = exact_p_best(means, sds)
    assert frame["p_best"].to_list() == pytest.approx(exact, abs=0.015)
    assert sum(frame["p_best"]) == pytest.approx(1.0)
    # expected rank: exactly 1 + the sum of P(other better), the pairwise figures
    ranking = rank_entries("bench", entries)
    for row in frame.iter_rows(named=True):
        others = [n for n in "wxyz" if n != row["model"]]
        expected = 1 + sum(ranking.p_matrix[(o, row["model"])] for o in others)
        assert row["expected_rank"] == pytest.approx(expected, abs=1e-12)


def test_exact_scores_ties_and_lower_is_better() -> None:
    exact = [Entry("hi", 80, 0, 80, 80, True), Entry("mid", 70, 0, 70, 70, True)]
    exact.append(Entry("lo", 60, 0, 60, 60, True))
    up = Comparison([rank_entries("acc", exact)], 0.9).to_frame()
    assert up.select("model", "p_best", "expected_rank").rows() == [
        ("hi", 1.0, 1.0),
        ("mid", 0.0, 2.0),
        ("lo", 0.0, 3.0),
    ]
    down = Comparison([rank_entries("error", exact, higher_is_better=False)], 0.9).to_frame()
    assert down.select("model", "p_best", "expected_rank").rows() == [
        ("lo", 1.0, 1.0),
        ("mid", 0.0, 2.0),
        ("hi", 0.0, 3.0),
    ]
    tied = [Entry("p", 50, 0, 50, 50, True), Entry("q", 50, 0, 50, 50, True)]
    assert Comparison([rank_entries("t", tied)], 0.9).to_frame()["p_best"].to_list() == [0.5, 0.5]


def test_five_tied_candidates_get_p_best_and_expected_rank_per_target_and_overall(
    bp: BenchPress, five: Comparison
) -> None:
    frame = five.to_frame()
    assert frame["benchmark"].unique(maintain_order=True).to_list() == [
        "humaneval",
        "mbpp_plus",
        "swe_bench_verified",
        "livecodebench",
        "aider_polyglot_diff",
    ]
    assert set(frame["tie_group"]) == {1}  # what the tie groups alone say: nothing
    for _, target in frame.group_by("benchmark"):
        assert target["p_best"].sum() == pytest.approx(1.0)
        assert target["expected_rank"].sum() == pytest.approx(15.0)  # 1 + 2 + ... + 5
        # within a tie group the figures still order the models as their scores do
        assert target["p_best"].to_list() == sorted(target["p_best"], reverse=True)
        assert target["expected_rank"].to_list() == sorted(target["expected_rank"])
        assert 0.15 < target["p_best"][0] < 0.5 and target["p_best"][-1] > 0.02
    overall = five.overall()
    assert overall.columns == ["rank", "model", "p_best", "expected_rank", "benchmarks"]
    assert overall["model"].to_list() == ["b", "d", "a", "e", "c"]
    assert overall["p_best"].sum() == pytest.approx(1.0)
    assert overall["expected_rank"].sum() == pytest.approx(15.0)
    assert set(overall["benchmarks"]) == {5}
    assert overall["p_best"].to_list() == sorted(overall["p_best"], reverse=True)
    # seeded: the same question, the same figures
    again = compare_models(bp, list(CANDIDATES.values()), "coding_assistant", list(CANDIDATES))
    assert again.overall().equals(overall) and again.to_frame().equals(frame)


def test_two_models_p_best_is_p_a_better_than_b(bp: BenchPress) -> None:
    """The joint draws keep each prediction's normal margin: with two models P(best) is the
    P(A > B) of the same answer, within the draws' error."""
    two = compare_models(bp, [CANDIDATES["a"], CANDIDATES["b"]], "coding_assistant", ["a", "b"])
    frame = two.to_frame()
    for ranking in two.rankings:
        rows = {
            r["model"]: r
            for r in frame.filter(frame["benchmark"] == ranking.benchmark).rows(named=True)
        }
        assert rows["a"]["p_best"] == pytest.approx(ranking.p_matrix[("a", "b")], abs=0.02)
        assert rows["a"]["expected_rank"] == pytest.approx(1 + ranking.p_matrix[("b", "a")])


def test_cli_compare_shows_p_best_and_expected_rank(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["compare", "--targets", "coding_assistant", "--store", STORE]
    for name, scores in CANDIDATES.items():
        argv += ["--model", f"{name}:" + ",".join(f"{b}={v}" for b, v in scores.items())]
    assert main(argv) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0].split()
    assert header[-3:] == ["p_best", "expected_rank", "p_better_than_next"]
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    overall = doc["overall"]
    assert [r["model"] for r in overall] == ["b", "d", "a", "e", "c"]
    lines = out.splitlines()
    start = lines.index(
        "across the 5 benchmarks (each draw ordered by mean rank): P(best), expected rank"
    )
    assert lines[start + 1 : start + 6] == [
        f"  {r['model']}: P(best) {r['p_best']:.2f}, expected rank {r['expected_rank']:.1f}"
        for r in overall
    ]
    first = doc["rows"][0]
    assert first["benchmark"] == "humaneval" and first["model"] == "b"
    table_first = lines[1].split()
    assert table_first[2] == "b" and float(table_first[7]) == pytest.approx(
        first["p_best"], abs=1e-3
    )
    assert float(table_first[8]) == pytest.approx(first["expected_rank"], abs=5e-3)


def test_api_compare_gives_p_best_expected_rank_the_matrix_and_ambiguous_variants() -> None:
    catalog = Catalog(stores=[bundled_snapshot_dir()])
    query = {
        "models": "gpt-5,o3,claude-sonnet-4,gemini-2.5-pro",
        "benchmarks": "gpqa_diamond,mmlu_pro,swe_bench_verified",
    }
    doc = handle(catalog, "/api/compare", query)
    assert [m["model_id"] for m in doc["models"]] == ["gpt-5", "claude-sonnet-4", "gemini-2.5-pro"]
    assert doc["ambiguous"] == [{"name": "o3", "variants": ["o3-high", "o3@low", "o3@medium"]}]
    for row in doc["rows"]:
        assert sum(row["p_best"]) == pytest.approx(1.0)
        assert sum(row["expected_rank"]) == pytest.approx(6.0)
        matrix = row["p_better"]
        for i in range(3):
            assert matrix[i][i] is None
            for j in range(3):
                if i != j:
                    assert matrix[i][j] + matrix[j][i] == pytest.approx(1.0)
                    # expected rank = 1 + the sum of the column's P(other better)
            assert row["expected_rank"][i] == pytest.approx(
                1 + sum(matrix[j][i] for j in range(3) if j != i)
            )
    # gpqa_diamond: observed 85.7, 75.4, 86.4, each +- its binomial error over 198 items
    gpqa = doc["rows"][0]
    assert [v["score"] for v in gpqa["values"]] == [85.7, 75.4, 86.4]
    bp = catalog.load()
    sd = [bp.measurement_noise("gpqa_diamond", v).sd for v in (85.7, 86.4)]
    assert 2.3 < sd[0] < 2.6  # sqrt(0.857 * 0.143 / 198) in points
    assert gpqa["p_better"][2][0] == pytest.approx(NormalDist().cdf(0.7 / math.hypot(*sd)))
    assert gpqa["p_best"][1] < 0.001 and gpqa["p_best"][2] > gpqa["p_best"][0]
    across = doc["overall"]
    assert across["benchmarks"] == ["gpqa_diamond", "mmlu_pro", "swe_bench_verified"]
    assert sum(across["p_best"]) == pytest.approx(1.0)
    assert sum(across["expected_rank"]) == pytest.approx(6.0)
    # an unknown name is left out and listed, naming it; alone it fails the request
    partly = handle(catalog, "/api/compare", {"models": "gpt-5,nobody"})
    assert [m["model_id"] for m in partly["models"]] == ["gpt-5"]
    assert [u["name"] for u in partly["unknown"]] == ["nobody"]
    with pytest.raises(ApiError, match="unknown model 'nobody'"):
        handle(catalog, "/api/compare", {"models": "nobody"})
