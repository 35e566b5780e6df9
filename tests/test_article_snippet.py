"""The BenchPress article's code runs as written (issue 16): the snippet verbatim, the
`benchpress` import name and `python -m benchpress.app`."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tomllib
import urllib.request
import warnings
from pathlib import Path

import pytest

from predictor.api import BenchPress as PredictorBenchPress
from predictor.snapshots.reader import list_versions
from predictor.util.paths import bundled_snapshot_dir

REPO_ROOT = Path(__file__).resolve().parent.parent

# The article's code exactly as published (the text); `a` and `b` are defined first.
ARTICLE = """\
from benchpress import BenchPress, ProbeBenchmarks
bp = BenchPress.from_pretrained("microsoft/benchpress-v1")
predictions = bp.predict({"mmlu": 78.3, "gsm8k": 85.1, "humaneval": 72.4,
                          "arc_challenge": 81.9, "hellaswag": 89.2})
for benchmark, result in predictions.items():
    print(f"{benchmark}: {result.score:.1f} ± {result.confidence:.1f}")
bp.predict({"mmlu": 82.1, "gsm8k": 88.3}, handle_missing="interpolate")
bp.compare_models([a, b], target_benchmarks=["mbpp", "math", "truthfulqa"])
bp.compare_with_known_models(predictions, reference_models=["claude-fable-5", "gpt-5-5"]).summary()
"""
# Two models' scores a reader would have on the article's benchmarks.
A = {"mmlu": 82.1, "gsm8k": 88.3, "humaneval": 80.5}
B = {"mmlu": 75.0, "gsm8k": 79.4, "humaneval": 68.9}


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, list[str], list[str]]:
    """(the snippet's namespace, its printed lines, the warnings it gave) on a fresh home."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BENCHPRESS_HOME", str(tmp_path_factory.mktemp("article") / "home"))
        namespace: dict = {"a": dict(A), "b": dict(B)}
        out = io.StringIO()
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
            warnings.simplefilter("always")
            exec(compile(ARTICLE, "article.py", "exec"), namespace)  # our own constant text
    return namespace, out.getvalue().splitlines(), [str(w.message) for w in caught]


def test_the_snippet_prints_one_line_per_benchmark_of_the_paper_matrix(ran) -> None:
    namespace, lines, _ = ran
    bp = namespace["bp"]
    assert bp.version == "microsoft/benchpress-v1"
    # the paper's 133 columns, LongFact's model-card cells apart (matrix policy): 135, 131 fitted
    assert (len(bp.models), len(bp.benchmarks), len(bp.fit_benchmarks_)) == (84, 135, 131)
    assert len(lines) == 131
    assert [line.split(": ")[0] for line in lines] == bp.fit_benchmarks_
    assert "gsm8k: 85.1 ± 0.0" in lines and "humaneval: 72.4 ± 0.0" in lines  # the probes
    assert not {"mmlu", "arc_challenge", "hellaswag"} & {line.split(": ")[0] for line in lines}
    # pinned snapshot, seeded fit: the same numbers on every machine
    for line in ("mmlu_pro: 61.8 ± 12.6", "math: 67.7 ± 25.3", "truthfulqa: 65.3 ± 8.8"):
        assert line in lines


def test_missing_probes_are_left_out_and_the_rest_predicts(ran) -> None:
    """ "interpolate": the prediction is the one from the probes the snapshot has."""
    namespace, lines, _ = ran
    bp = namespace["bp"]
    alone = bp.predict({"gsm8k": 85.1, "humaneval": 72.4})
    assert namespace["predictions"] == alone
    assert lines == [f"{b}: {p.score:.1f} ± {p.confidence:.1f}" for b, p in alone.items()]


def test_the_snippet_warns_about_each_benchmark_it_left_out(ran) -> None:
    _, _, caught = ran
    assert caught == [
        "snapshot microsoft/benchpress-v1 has no benchmark mmlu, arc_challenge, hellaswag: "
        "left out of the probes; predicting from the other 2 (gsm8k, humaneval); "
        "handle_missing='error' refuses instead",
        "snapshot microsoft/benchpress-v1 has no benchmark mmlu: left out of the probes; "
        "predicting from the other 1 (gsm8k); handle_missing='error' refuses instead",
        "targets: snapshot microsoft/benchpress-v1 has no benchmark mbpp: left out; "
        "comparing on math, truthfulqa",
        *[
            "snapshot microsoft/benchpress-v1 has no benchmark mmlu: left out of the probes; "
            "predicting from the other 2 (gsm8k, humaneval); handle_missing='error' refuses "
            "instead"
        ]
        * 2,  # a and b, each predicted for the comparison
    ]


def test_the_comparisons_say_which_ids_they_used(ran) -> None:
    namespace, _, _ = ran
    bp, predictions = namespace["bp"], namespace["predictions"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compared = bp.compare_models([A, B], target_benchmarks=["mbpp", "math", "truthfulqa"])
    assert [r.benchmark for r in compared.rankings] == ["math", "truthfulqa"]
    known = bp.compare_with_known_models(
        predictions, reference_models=["claude-fable-5", "gpt-5-5"]
    )
    summary = known.summary().splitlines()
    catalogue = list_versions(bundled_snapshot_dir())[-1]
    assert summary[:3] == [
        "new model among 2 reference models (90% intervals):",
        "  reference claude-fable-5 = claude-fable-5@xhigh (no catalogue headline: the "
        f"highest reasoning effort), from snapshot {catalogue}",
        "  reference gpt-5-5 = gpt-5.5 (version dots: gpt-5.5)",
    ]
    assert summary[3] == (
        "  mixed snapshots: new model is predicted in snapshot microsoft/benchpress-v1, but "
        f"claude-fable-5@xhigh is not in it: its scores come from snapshot {catalogue} "
        "(another matrix and fit); compare with care"
    )
    assert summary[4].startswith("  mmlu_pro: predicted 61.8 [")
    versus = sorted(line.split(" (")[0] for line in summary[5:7])  # best reference first
    assert summary[5].endswith(f"  (snapshot {catalogue})")  # its scores: another snapshot
    assert versus == ["      vs claude-fable-5@xhigh", "      vs gpt-5.5"]
    frame = known.to_frame()
    assert sorted(set(frame["reference_model"])) == ["claude-fable-5@xhigh", "gpt-5.5"]
    assert set(frame.select("reference_model", "reference_snapshot").iter_rows()) == {
        ("claude-fable-5@xhigh", catalogue),
        ("gpt-5.5", "microsoft/benchpress-v1"),
    }
    assert str(known) == repr(known) == known.summary()  # print(comparison) shows it
    assert frame["benchmark"].unique(maintain_order=True).to_list() == [
        "mmlu_pro",
        "gpqa_diamond",
        "ifeval",
        "chatbot_arena_elo",
        "swe_bench_verified",
    ]


def test_the_import_name_is_the_predictor_api() -> None:
    import benchpress
    from predictor.missing_probes import MissingProbesError
    from predictor.probe_sets import ProbeBenchmarks

    assert benchpress.BenchPress is PredictorBenchPress
    assert benchpress.ProbeBenchmarks is ProbeBenchmarks
    assert benchpress.MissingProbesError is MissingProbesError
    assert benchpress.ProbeBenchmarks.DEFAULT == (
        "gpqa_diamond",
        "browsecomp",
        "codeforces_rating",
        "hmmt_feb_2025",
        "hle",
    )
    assert benchpress.pretrained_names() == ["microsoft/benchpress-v1"]
    for name in benchpress.__all__:
        assert getattr(benchpress, name) is not None


def test_the_distribution_installs_the_benchpress_package() -> None:
    """`pip install benchpress-llm` must bring `import benchpress`: setuptools finds it with
    the project's own package settings."""
    from setuptools import find_packages

    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    assert "benchpress" in find_packages(str(REPO_ROOT), include=include)


def _env(home: Path) -> dict[str, str]:
    # the repo on the path as an installed package would be (an editable install predating
    # the benchpress package maps only the older packages)
    path = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "BENCHPRESS_HOME": str(home), "PYTHONPATH": path}


def test_python_m_benchpress_app_serves_the_page(tmp_path: Path) -> None:
    store = bundled_snapshot_dir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchpress.app", "--port", "0", "--store", str(store), "--quiet"],
        cwd=tmp_path,
        env=_env(tmp_path / "home"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        said = [proc.stdout.readline(), proc.stdout.readline()]
        version = list_versions(store)[-1]
        assert said[0] == f"benchpress app: snapshots: 1 snapshot version(s), newest {version}\n"
        assert said[1].startswith("benchpress app: serving on http://127.0.0.1:")
        url = said[1].split("serving on ", 1)[1].split()[0].rstrip("/")
        with urllib.request.urlopen(url + "/", timeout=120) as page:
            assert page.status == 200 and b'src="/static/app.js"' in page.read()
        with urllib.request.urlopen(url + "/api/versions", timeout=120) as answer:
            assert version in json.dumps(json.load(answer))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:  # a loaded CI machine: never leave the server behind
            proc.kill()
            proc.wait(timeout=30)


def test_python_m_benchpress_app_fails_like_benchpress_app(tmp_path: Path) -> None:
    """Same options, message and exit code as `benchpress app`."""
    env = _env(tmp_path / "home")
    args = ["--port", "0", "--store", str(tmp_path / "no-such-store")]
    ours = subprocess.run(
        [sys.executable, "-m", "benchpress.app", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    theirs = subprocess.run(
        [sys.executable, "-m", "predictor.cli", "app", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (ours.returncode, ours.stderr) == (theirs.returncode, theirs.stderr)
    assert ours.returncode != 0
    assert "does not exist or is not a directory" in ours.stderr
