"""Example outputs quoted in the docs are what the documented call gives today.

Each test runs the call a page shows on the snapshot bundled with the package (loaded once for
the module, with an empty BENCHPRESS_HOME so nobody's own snapshots answer) and compares the
numbers the page quotes, formatted as the page formats them. A test failing here means a page
shows numbers the code no longer gives: rerun the call and update the page.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from predictor import BenchPress
from predictor.cli.main import main as cli_main
from predictor.snapshots.versions import list_versions
from predictor.util.paths import bundled_snapshot_dir

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BUNDLED = list_versions(bundled_snapshot_dir())[-1]
PROBES = {"gpqa_diamond": 80, "hle": 20, "mmlu_pro": 80}
DEMO_SCORES = "gpqa_diamond=80,hle=20,mmlu_pro=80,arc_agi_1=60,codeforces_rating=1800"


def quoted(page: str, pattern: str) -> tuple[str, ...]:
    """The groups of `pattern` on the page; a clear failure when the page no longer has it."""
    text = (ROOT / page).read_text()
    match = re.search(pattern, text)
    assert match is not None, f"{page} no longer quotes {pattern!r}: update this test"
    return match.groups()


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(BUNDLED, store=bundled_snapshot_dir())


def test_python_api_predict_example(bp: BenchPress) -> None:
    preds = bp.predict(PROBES, level=0.9)
    p = preds["aime_2025"]
    page = "docs/python-api.md"
    assert quoted(page, r"p\.score, p\.low, p\.high +# (.+) on (\S+)") == (
        f"{p.score:.1f}, {p.low:.1f}, {p.high:.1f}",
        BUNDLED,
    )
    assert quoted(page, r"p\.confidence +# ([\d.]+):") == (f"{p.confidence:.1f}",)
    assert quoted(page, r"p\.p_within_5 +# ([\d.]+):") == (f"{p.p_within_5:.2f}",)
    assert quoted(page, r"for every fitted benchmark \((\d+) on the bundled") == (str(len(preds)),)


def test_python_api_noisy_probe_example(bp: BenchPress) -> None:
    page = "docs/python-api.md"
    before = bp.predict({"hle": 20})["mmlu_pro"].score
    exact = bp.predict({"gpqa_diamond": 90, "hle": 20})["mmlu_pro"].score
    noisy = bp.predict({"gpqa_diamond": (90, 5), "hle": 20})["mmlu_pro"].score
    assert quoted(page, r"before = bp\.predict.*# ([\d.]+)") == (f"{before:.1f}",)
    assert quoted(page, r'"gpqa_diamond": 90, "hle": 20\}\)\["mmlu_pro"\]\.score +# ([\d.]+)') == (
        f"{exact:.1f}",
    )
    assert quoted(page, r'\(90, 5\), "hle": 20\}\)\["mmlu_pro"\]\.score +# ([\d.]+)') == (
        f"{noisy:.1f}",
    )


def test_index_example_prints_what_the_readme_shows(bp: BenchPress) -> None:
    result = bp.predict(PROBES)["swe_bench_verified"]
    shown = f"{result.score:.1f} ± {result.confidence:.1f}"
    assert quoted("docs/index.md", r"# ([\d.]+ ± [\d.]+) on (\S+)") == (shown, BUNDLED)
    assert quoted("README.md", r"\nswe_bench_verified +([\d.]+ ± [\d.]+)\n") == (shown,)


@pytest.mark.parametrize("page", ["docs/python-api.md", "docs/method.md"])
def test_suspicious_scores_count_and_example(bp: BenchPress, page: str) -> None:
    flagged = bp.suspicious_scores(threshold=3.5)
    example = flagged.filter(
        (flagged["model_id"] == "gpt-5.5@medium")
        & (flagged["benchmark_id"] == "livebench_olympiad")
    )
    assert example.height == 1
    assert quoted(page, r"The bundled snapshot flags (\d+)\s+cells") == (str(flagged.height),)
    assert quoted(page, r"`livebench_olympiad` \(predicted ([\d.]+)\)") == (
        f"{example['predicted'][0]:.1f}",
    )


@pytest.mark.parametrize("page", ["docs/snapshots.md", "docs/matrix-policy.md"])
def test_bundled_snapshot_counts(bp: BenchPress, page: str) -> None:
    counts = bp.manifest["counts"]
    shown = f"{counts['models']:,} models x {counts['benchmarks']:,} benchmarks, " + (
        f"{counts['cells']:,} cells"
    )
    assert quoted(page, r"([\d,]+ models x [\d,]+ benchmarks, [\d,]+ cells)") == (shown,)
    if page == "docs/snapshots.md":
        assert quoted(page, r"The package ships one snapshot \(`([^`]+)`") == (BUNDLED,)
        assert quoted(page, r"cells,\s+(\d+) benchmarks fitted") == (str(len(bp.fit_benchmarks_)),)


def test_getting_started_demo_table(capsys, tmp_path, monkeypatch) -> None:
    """`make demo` ends with `benchpress predict --scores DEMO_SCORES` on the snapshot its
    refresh of the recorded payloads publishes; `make bundle` builds the bundled snapshot from
    the same payloads, so the prediction from the bundled one is what the demo prints."""
    monkeypatch.setenv("BENCHPRESS_HOME", str(tmp_path / "home"))
    assert cli_main(["predict", "--scores", DEMO_SCORES]) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    (block,) = quoted("docs/getting-started.md", r"(?s)```text\n(snapshot .*?\n)\.\.\.\n```")
    shown = block.splitlines()
    assert shown == printed[: len(shown)]
    assert len(shown) >= 4  # the heading, the column names and at least two rows


def test_cli_probe_plan_example(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("BENCHPRESS_HOME", str(tmp_path / "home"))
    argv = ["probes", "--runnable", "lm-eval", "--budget-tokens", "2M"]
    assert cli_main(argv) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    (block,) = quoted("docs/cli.md", r"(?s)```text\n(snapshot \S+: lm-eval probe plan .*?)```")
    assert block.splitlines() == printed


def test_time_honest_table_is_the_stored_run() -> None:
    """The method page's quarter table and the home page's summary quote the stored results of
    `benchpress evaluate --protocol future` (docs/assets/data/, checked against their data by
    tests/docs/test_doc_figures.py), which the page's figure draws."""
    import json

    results = json.loads((DOCS / "assets" / "data" / "evaluate_future.json").read_text())
    order = ["ours", "ours_plain", "reference", "column_mean"]

    def cell(row: dict) -> str:
        if row["method"] == "column_mean":
            return f"{row['medae']:.2f}"
        return f"{row['medae']:.2f} ({row['coverage']:.3f}, {row['median_width']:.1f})"

    by_quarter: dict[str, dict] = {}
    for row in results["quarters"]:
        by_quarter.setdefault(row["quarter"], {})[row["method"]] = row
    expected = []
    for quarter, rows in by_quarter.items():
        first = rows["ours"]
        counts = f"{first['n_train_models']} / {first['n_test_models']}"
        expected.append([quarter, counts, *(cell(rows[m]) for m in order)])
    pooled = {row["method"]: row for row in results["pooled"]}
    expected.append(["all quarters", "", *(cell(pooled[m]) for m in order)])
    text = (DOCS / "method.md").read_text()
    start = text.index("| quarter | earlier / new models |")
    table = text[start : text.index("\n\n", start)].splitlines()[2:]
    shown = [[c.strip().replace("**", "") for c in line.strip("|").split("|")] for line in table]
    assert shown == expected
    ours, recipe = pooled["ours"], pooled["reference"]
    assert quoted("docs/index.md", r"--protocol future`\): ([\d.]+)\s+against ([\d.]+) for") == (
        f"{ours['medae']:.2f}",
        f"{recipe['medae']:.2f}",
    )
    assert quoted("docs/index.md", r"intervals that cover ([\d.]+) of their scores") == (
        f"{ours['coverage']:.2f}",
    )
