"""Checkpoint tracking: step parsing, criteria, the joint predictive draws, the plot, and
`benchpress track` over real lm-evaluation-harness results files of a fine-tuning run (five
checkpoints, built from the structure of the vendored real results file), through the real
CLI and a real DuckDB store in a temp BENCHPRESS_HOME."""

from __future__ import annotations

import copy
import json
import re
import struct
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from predictor import BenchPress
from predictor.cli import main
from predictor.tracking import checkpoints as tracking
from predictor.tracking.checkpoints import Criterion, TrackInputError
from predictor.tracking.plot import TargetSeries, render
from warehouse import private_models as store

LM_EVAL_FILE = (
    Path(__file__).resolve().parents[1]
    / "fixtures/eval_formats/lm_eval/results_2026-01-21T03-44-18.458309.json"
)
# task -> (metric key, fraction at step 0, gain per 100 steps): a run that keeps improving
TASKS = {
    "leaderboard_gpqa": ("acc_norm,none", 0.27, 0.015),
    "leaderboard_mmlu_pro": ("acc,none", 0.22, 0.045),
    "leaderboard_bbh": ("acc_norm,none", 0.32, 0.04),
    "leaderboard_musr": ("acc_norm,none", 0.34, 0.012),
    "leaderboard_math_hard": ("exact_match,none", 0.03, 0.035),
}
STEPS = (100, 200, 300, 400, 500)
TARGETS = ["mmlu_pro", "gpqa_diamond", "ifeval"]
GLOB = "ckpts/step-*/results_*.json"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@cache
def real_results() -> dict:
    return json.loads(LM_EVAL_FILE.read_text(encoding="utf-8"))


def lm_eval_results(
    model: str, values: dict[str, float], metrics: dict[str, str] | None = None
) -> dict:
    """An lm-eval results document: the vendored real file with our tasks' results (each
    task's metric key from `metrics`, else from TASKS)."""
    doc = copy.deepcopy(real_results())
    template = next(iter(doc["configs"].values()))
    metrics = {task: (metrics or {}).get(task) or TASKS[task][0] for task in values}
    doc["results"] = {
        task: {"alias": task, key: value, key.replace(",", "_stderr,"): 0.012}
        for (task, value), key in zip(values.items(), metrics.values(), strict=True)
    }
    doc["configs"] = {
        task: {
            **template,
            "task": task,
            "num_fewshot": 0,
            "metadata": {**template["metadata"], "pretrained": model},
            "metric_list": [
                {"metric": key.split(",")[0], "aggregation": "mean", "higher_is_better": True}
            ],
        }  # fmt: skip
        for task, key in metrics.items()
    }
    doc["group_subtasks"] = {task: [] for task in values}
    doc["versions"] = {task: 1.0 for task in values}
    doc["n-shot"] = {task: 0 for task in values}
    doc["higher_is_better"] = {t: {k.split(",")[0]: True} for t, k in metrics.items()}
    doc["n-samples"] = {task: {"original": 1000, "effective": 1000} for task in values}
    doc["task_hashes"] = {task: "0" * 64 for task in values}
    doc["model_name"] = model
    doc["model_name_sanitized"] = model.replace("/", "__")
    doc["config"]["model_args"] = f"pretrained={model},trust_remote_code=True"
    return doc


def checkpoint_values(step: int) -> dict[str, float]:
    return {task: round(base + gain * step / 100, 4) for task, (_, base, gain) in TASKS.items()}


def write_run(root: Path, steps=STEPS, folder: str = "step-{step}") -> dict[int, Path]:
    """One lm-eval results file per checkpoint under root/ckpts/<folder>/."""
    files = {}
    for step in steps:
        path = root / "ckpts" / folder.format(step=step) / "results_2026-02-01T10-00-00.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = lm_eval_results(f"team/run-a/checkpoint-{step}", checkpoint_values(step))
        path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
        files[step] = path
    return files


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load()


@pytest.fixture
def run_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[int, Path]:
    monkeypatch.chdir(tmp_path)  # the glob is given relative, as users type it
    return write_run(tmp_path)


def track(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["track", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def store_state(home: Path) -> tuple[list, list]:
    listed = store.list_models(home)
    return listed.rows(), [store.model_cells(n, home).rows() for n in listed["name"]]


# ---------------------------------------------------------------------------- steps
@pytest.mark.parametrize(
    ("path", "step"),
    [
        ("ckpts/step-500/results_2026.json", 500),
        ("ckpts/steps_20/results.json", 20),
        ("out/checkpoint-1000/results.json", 1000),
        ("out/global_step1500/eval/results.json", 1500),
        ("out/Checkpoint-1000/global_step1000/results.json", 1000),
        ("runs/iter_0042/results.json", 42),
        ("runs/ckpt=7/results.json", 7),
        ("runs/run-a/ckpt/step-300/results_2026-01-21T03-44-18.json", 300),
    ],
)
def test_the_step_is_read_from_the_path(path: str, step: int) -> None:
    assert tracking.step_of(path) == step


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("ckpts/final/results.json", "no step in the path"),
        ("ckpts/mystep-5/results.json", "no step in the path"),
        ("runs/iteration-5/results.json", "no step in the path"),
        ("runs/iter_2/step-500/results.json", "the path names several steps (2, 500)"),
        ("runs/step-" + "9" * 20 + "/results.json", "implausibly large"),
    ],
)
def test_an_unclear_step_is_an_error_pointing_at_step_from(path: str, message: str) -> None:
    with pytest.raises(TrackInputError) as caught:
        tracking.step_of(path)
    assert message in str(caught.value)
    assert str(caught.value).startswith(path)
    if "large" not in message:
        assert "pass --step-from REGEX with one capturing group" in str(caught.value)


def test_step_from_takes_a_regex_with_one_group() -> None:
    pattern = tracking.compile_step_pattern(r"epoch(\d+)")
    assert tracking.step_of("runs/epoch12/results.json", pattern) == 12
    assert tracking.step_of("runs/epoch12/step-500/results.json", pattern) == 12
    with pytest.raises(TrackInputError, match="does not match"):
        tracking.step_of("runs/final/results.json", pattern)
    with pytest.raises(TrackInputError, match=r"the step 'x' is not a whole number"):
        tracking.step_of("runs/epochx/r.json", tracking.compile_step_pattern(r"epoch(\w)"))
    for bad, message in (
        (r"epoch\d+", "exactly one capturing group (the step), 'epoch\\\\d+' has 0"),
        (r"(a)(\d+)", "has 2"),
        (r"epoch(\d+", "not a regular expression"),
    ):
        with pytest.raises(TrackInputError, match=re.escape(message) if "has" in message
                           else message):  # fmt: skip
            tracking.compile_step_pattern(bad)


def test_checkpoints_are_grouped_and_ordered_by_step_number() -> None:
    paths = ["c/step-1000/a.json", "c/step-200/a.json", "c/step-200/b.json", "c/step-30/a.json"]
    assert tracking.group_by_step(paths) == [
        (30, [Path("c/step-30/a.json")]),
        (200, [Path("c/step-200/a.json"), Path("c/step-200/b.json")]),
        (1000, [Path("c/step-1000/a.json")]),
    ]
    assert tracking.checkpoint_name("run-a", 200) == "run-a@step-200"


# ---------------------------------------------------------------------------- criteria
def test_criteria_are_parsed() -> None:
    assert tracking.parse_criteria("mmlu_pro>=70, GPQA Diamond > 45.5,hle<3,cost<=-1") == [
        Criterion("mmlu_pro", ">=", 70.0),
        Criterion("GPQA Diamond", ">", 45.5),
        Criterion("hle", "<", 3.0),
        Criterion("cost", "<=", -1.0),
    ]
    assert str(Criterion("mmlu_pro", ">=", 70.0)) == "mmlu_pro>=70"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "--require needs at least one criterion"),
        (" , ", "--require needs at least one criterion"),
        ("mmlu_pro", "'mmlu_pro' is not NAME>=VALUE"),
        ("mmlu_pro=70", "uses '='; use >=, <=, > or <"),
        ("mmlu_pro==70", "uses '=='"),
        ("mmlu_pro=>70", "uses '=>'"),
        ("mmlu_pro>=high", "non-numeric threshold 'high'"),
        ("mmlu_pro>=nan", "needs a finite threshold"),
        (">=70", "is not NAME>=VALUE"),
    ],
)
def test_malformed_criteria_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(TrackInputError, match=re.escape(message)):
        tracking.parse_criteria(text)


def test_criteria_resolve_to_fitted_benchmarks(bp: BenchPress) -> None:
    parsed = tracking.parse_criteria("MMLU Pro>=70,mmlu_pro>=70,gpqa_diamond>=45")
    resolved = tracking.resolve_criteria(parsed, bp.resolve_benchmark, bp.fit_benchmarks_)
    assert resolved == [Criterion("mmlu_pro", ">=", 70.0), Criterion("gpqa_diamond", ">=", 45.0)]
    unfitted = next(b for b in bp.benchmarks if b not in bp.fit_benchmarks_)
    with pytest.raises(TrackInputError, match=f"{unfitted} is not predicted by this snapshot"):
        tracking.resolve_criteria(
            [Criterion(unfitted, ">=", 1.0)], bp.resolve_benchmark, bp.fit_benchmarks_
        )


def test_the_joint_probability_is_counted_on_the_draws_not_multiplied() -> None:
    rng = np.random.default_rng(7)
    common = rng.standard_normal(20_000)
    draws = np.column_stack(
        [50 + 10 * common, 40 + 10 * common, 30 + 10 * rng.standard_normal(20_000)]
    )
    benchmarks = ["a", "b", "c"]
    both = [Criterion("a", ">=", 50.0), Criterion("b", ">=", 40.0)]
    joint = tracking.joint_probability(draws, benchmarks, both)
    assert joint == float(((draws[:, 0] >= 50) & (draws[:, 1] >= 40)).mean())
    marginals = tracking.marginal_probabilities(draws, benchmarks, both)
    assert marginals == [float((draws[:, 0] >= 50).mean()), float((draws[:, 1] >= 40).mean())]
    assert joint == pytest.approx(0.5, abs=0.02)  # perfectly correlated: P(both) = P(one)
    assert marginals[0] * marginals[1] == pytest.approx(0.25, abs=0.02)
    independent = [Criterion("a", ">=", 50.0), Criterion("c", "<", 30.0)]
    p = tracking.marginal_probabilities(draws, benchmarks, independent)
    assert tracking.joint_probability(draws, benchmarks, independent) == pytest.approx(
        p[0] * p[1], abs=0.02
    )


def test_first_meeting() -> None:
    assert tracking.first_meeting([300, 100, 200], [0.95, 0.2, 0.9]) == 200
    assert tracking.first_meeting([100, 200], [0.5, 0.89999]) is None
    assert tracking.first_meeting([], []) is None


# ---------------------------------------------------------------------------- draws
PROBES = {"open_llm_mmlu_pro": 35.0, "open_llm_bbh": 45.0, "open_llm_gpqa": 8.0}


def test_predictive_draws_are_the_predict_distribution_jointly(bp: BenchPress) -> None:
    benchmarks, draws = bp.predictive_draws(PROBES, n=4000, random_state=0)
    assert benchmarks == bp.fit_benchmarks_
    assert draws.shape == (4000, len(benchmarks))
    again = bp.predictive_draws(PROBES, n=4000, random_state=0)[1]
    assert np.array_equal(draws, again)  # seeded
    assert not np.array_equal(draws, bp.predictive_draws(PROBES, n=4000, random_state=1)[1])
    predicted = bp.predict(PROBES, level=0.9)
    errors, coverage = {}, []
    for benchmark, p in predicted.items():
        column = draws[:, benchmarks.index(benchmark)]
        if p.observed:
            assert np.all(column == PROBES[benchmark])
            continue
        width = p.high - p.low
        assert width > 0, benchmark  # never zero width, even clipped at a bound
        # a centre past the flat end of a link sits on its edge in the draws, a tenth of a
        # point from the asymptote (`ScaleTransform.onto_edges`)
        assert np.median(column) == pytest.approx(p.score, abs=max(0.05 * width, 0.15))
        low, high = np.quantile(column, [0.05, 0.95])
        errors[benchmark] = max(abs(low - p.low), abs(high - p.high)) / width
        coverage.append(np.mean((column >= p.low) & (column <= p.high)))
    # the draws' central 90% is the 90% interval: closely for the headline benchmarks, and
    # for nearly all of the others (a few near-0% tails are skewed in logit space: this weak
    # model's HLE is predicted at 0, its draws' 95th percentile 4.2 against the interval's 3.7)
    assert max(errors[b] for b in ("mmlu_pro", "gpqa_diamond", "ifeval", "math_500")) < 0.08
    assert predicted["hle"].score < 0.5 and errors["hle"] < 0.2
    assert np.median(list(errors.values())) < 0.04
    assert np.quantile(list(errors.values()), 0.9) < 0.12  # a weak model: many near-0 tails
    assert np.median(coverage) == pytest.approx(0.9, abs=0.02)
    floor, ceiling = bp._bounds
    assert np.all((draws >= floor) & (draws <= ceiling))
    # benchmarks loading on the same factors move together
    j, k = benchmarks.index("mmlu_pro"), benchmarks.index("gpqa_diamond")
    assert np.corrcoef(draws[:, j], draws[:, k])[0, 1] > 0.2


def test_draws_at_another_level_match_that_interval(bp: BenchPress) -> None:
    benchmarks, draws = bp.predictive_draws(PROBES, n=4000, level=0.5)
    p = bp.predict(PROBES, level=0.5)["hle"]
    column = draws[:, benchmarks.index("hle")]
    width = p.high - p.low
    assert np.quantile(column, 0.25) == pytest.approx(p.low, abs=0.1 * width)
    assert np.quantile(column, 0.75) == pytest.approx(p.high, abs=0.1 * width)


# ---------------------------------------------------------------------------- plot
def plot_inputs(n_targets: int = 3):
    steps = [100, 200, 300]
    targets = [
        TargetSeries(f"bench_{t}$x$", [10.0 + t, 12.0 + t, 15.0 + t], [5.0, 6.0, 9.0],
                     [15.0 + t, 18.0 + t, 21.0 + t], [False, t == 0, False])
        for t in range(n_targets)
    ]  # fmt: skip
    probes = {"open_llm_bbh": [30.0, 33.0, None], "open_llm_gpqa\x1b[2J": [5.0, 6.0, 7.0]}
    return steps, targets, probes


def svg_ids(data: bytes) -> list[str]:
    root = ET.fromstring(data)
    return [el.get("id") for el in root.iter() if el.get("id")]


def test_the_svg_plot_has_one_series_per_target_and_probe_and_is_deterministic() -> None:
    steps, targets, probes = plot_inputs()
    first, counts = render(steps, targets, probes, "svg", title="run x", p_all=[0.1, 0.5, 0.95])
    second, _ = render(steps, targets, probes, "svg", title="run x", p_all=[0.1, 0.5, 0.95])
    assert first == second
    assert counts == {"trajectories": 3, "bands": 3, "probe_series": 2, "probability_series": 1}
    ids = svg_ids(first)
    assert sorted(i for i in ids if re.fullmatch(r"(trajectory|band|probe)-\d+|p-all", i)) == [
        "band-0", "band-1", "band-2", "p-all", "probe-0", "probe-1",
        "trajectory-0", "trajectory-1", "trajectory-2",
    ]  # fmt: skip
    assert [i for i in ids if i.startswith("target-observed-")] == ["target-observed-0"]
    assert b"<dc:date>" not in first
    assert b"\x1b" not in first


def test_the_png_plot_is_a_valid_png() -> None:
    steps, targets, probes = plot_inputs(2)
    data, counts = render(steps, targets, probes, "png")
    assert data.startswith(PNG_MAGIC)
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1260, 300)  # 2 targets + the probes: 3 panels in 1 row
    assert counts["probability_series"] == 0
    assert render(steps, targets, probes, "png")[0] == data


# ---------------------------------------------------------------------------- the command
def criteria_for(bp: BenchPress, files: dict[int, Path]) -> str:
    """Thresholds at the middle checkpoint's predicted medians: P(each) about 0.5 there."""
    middle = bp.predict([str(files[300])], targets=["mmlu_pro", "gpqa_diamond"])
    return (
        f"mmlu_pro>={middle['mmlu_pro'].score:.1f},gpqa_diamond>={middle['gpqa_diamond'].score:.1f}"
    )


def test_track_prints_each_checkpoint_as_predict_does(
    benchpress_home: Path, run_files: dict[int, Path], capsys, bp: BenchPress
) -> None:
    require = criteria_for(bp, run_files)
    code, out, err = track(capsys, "run-a", "--from", GLOB, "--targets", ",".join(TARGETS),
                           "--require", require, "--plot", "run.svg")  # fmt: skip
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "run run-a: 5 checkpoints stored as private models run-a@step-100 ..."
    assert lines[1] == (
        f"snapshot {bp.version}: predicted scores with 90% intervals (observed = the "
        "checkpoint's own score)"
    )
    table = [re.split(r"\s{2,}", line.strip()) for line in lines[2:8]]
    assert table[0] == ["step", "probes", *TARGETS, "P(all)"]
    criteria = tracking.resolve_criteria(
        tracking.parse_criteria(require), bp.resolve_benchmark, bp.fit_benchmarks_
    )
    joint = []
    for row, step in zip(table[1:], STEPS, strict=True):
        files = [str(run_files[step])]
        predicted = bp.predict(files, targets=TARGETS)
        scores = bp.read_results(files)
        used = scores.filter(scores["status"] == "mapped")
        assert row[:2] == [str(step), str(used.height)]
        assert used.height >= 4  # the leaderboard tasks map onto our benchmarks
        assert row[2:5] == [
            f"{predicted[b].score:.1f} ({predicted[b].low:.1f}-{predicted[b].high:.1f})"
            for b in TARGETS
        ]
        # each score with the file's standard error, as the fold-in takes it
        probes = {
            b: (score, stderr)
            for b, score, stderr in zip(
                used["benchmark_id"], used["score"], used["stderr"], strict=True
            )
        }
        benchmarks, draws = bp.predictive_draws(probes, n=4000, random_state=0)
        joint.append(tracking.joint_probability(draws, benchmarks, criteria))
        assert row[5] == f"{joint[-1]:.3f}"
    shown_criteria = ", ".join(str(c) for c in criteria)
    first = tracking.first_meeting(list(STEPS), joint)
    assert lines[8].startswith("run run-a: family run-a (not in the fit: population prior), ")
    assert lines[10:] == [
        f"P(all) = P({shown_criteria}), joint over 4000 predictive draws per checkpoint",
        "first checkpoint with P >= 0.9: " + (f"step {first}" if first else "none yet"),
        "plot: run.svg",
    ]
    ids = svg_ids(Path("run.svg").read_bytes())
    assert sum(i.startswith("trajectory-") for i in ids) == len(TARGETS)
    assert sum(i.startswith("band-") for i in ids) == len(TARGETS)
    assert sum(i.startswith("probe-") for i in ids) == used.height
    assert ids.count("p-all") == 1
    listed = store.list_models(benchpress_home)
    assert listed.select("name", "run", "step").rows() == [
        (f"run-a@step-{s}", "run-a", s) for s in STEPS
    ]
    assert listed["source_models"].to_list() == [f"team/run-a/checkpoint-{s}" for s in STEPS]


def test_the_joint_probability_is_not_the_product_of_the_marginals(
    benchpress_home: Path, run_files: dict[int, Path], capsys, bp: BenchPress
) -> None:
    require = criteria_for(bp, run_files)
    code, out, _ = track(capsys, "run-a", "--from", GLOB, "--require", require, "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["criteria"] == [
        str(c) for c in tracking.parse_criteria(require)
    ]  # canonical ids, thresholds as %g
    middle = next(c for c in payload["checkpoints"] if c["step"] == 300)
    each = list(middle["p_each"].values())
    assert each == [pytest.approx(0.5, abs=0.1)] * 2
    # mmlu_pro and gpqa_diamond move together: P(both) is well above P(one) x P(other)
    assert middle["p_all"] - each[0] * each[1] > 0.05
    assert middle["p_all"] <= min(each)
    probabilities = [c["p_all"] for c in payload["checkpoints"]]
    assert probabilities == sorted(probabilities)  # the run keeps improving
    assert payload["first_step_meeting"] == tracking.first_meeting(list(STEPS), probabilities)


def test_a_criterion_on_an_observed_score_takes_it_as_a_measurement(
    benchpress_home: Path, run_files: dict[int, Path], capsys
) -> None:
    """open_llm_mmlu_pro is scored at every checkpoint (35.5 at step 300, the file's standard
    error 1.2 points): `>=35` there is P(35.5 + 1.2 Z >= 35) = Phi(0.5 / 1.2) = 0.66, not a
    certain pass, and the answer says which noise it took."""
    from statistics import NormalDist

    require = "open_llm_mmlu_pro>=35"
    code, out, _ = track(capsys, "run-a", "--from", GLOB, "--require", require, "--json")
    assert code == 0
    checkpoints = json.loads(out)["checkpoints"]
    observed = [c["probes"]["open_llm_mmlu_pro"] for c in checkpoints]
    assert observed == pytest.approx([26.5, 31.0, 35.5, 40.0, 44.5])
    expected = [NormalDist().cdf((score - 35.0) / 1.2) for score in observed]
    assert [c["p_all"] for c in checkpoints] == pytest.approx(expected, abs=0.02)
    assert 0.6 < checkpoints[2]["p_all"] < 0.72
    assert all(
        c["measurement_noise"]
        == {"open_llm_mmlu_pro": {"sd": pytest.approx(1.2), "source": "given"}}
        for c in checkpoints
    )
    code, out, _ = track(capsys, "run-a", "--from", GLOB, "--require", require)
    assert code == 0
    assert (
        "criteria on observed scores take them as measured: open_llm_mmlu_pro +-1.2 (given)"
        in out.splitlines()
    )


def test_json_and_csv_carry_every_checkpoint(
    benchpress_home: Path, run_files: dict[int, Path], capsys, bp: BenchPress
) -> None:
    code, out, _ = track(capsys, "run-a", "--from", GLOB, "--targets", "mmlu_pro", "--csv")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "run,step,model,benchmark,score,low,high,level,observed,p_all"
    assert [line.split(",")[:4] for line in lines[1:]] == [
        ["run-a", str(s), f"run-a@step-{s}", "mmlu_pro"] for s in STEPS
    ]
    predicted = bp.predict([str(run_files[500])], targets=["mmlu_pro"])["mmlu_pro"]
    assert float(lines[-1].split(",")[4]) == pytest.approx(predicted.score, rel=1e-12)


def test_tracking_a_run_again_replaces_its_checkpoints(
    benchpress_home: Path, run_files: dict[int, Path], capsys
) -> None:
    assert track(capsys, "run-a", "--from", GLOB)[0] == 0
    code, out, _ = track(capsys, "run-a", "--from", "ckpts/step-[1-3]00/*.json")
    assert code == 0
    assert out.splitlines()[0] == (
        "run run-a: 3 checkpoints stored as private models run-a@step-100 ..., replacing "
        "the 5 checkpoint(s) tracked before"
    )
    assert store.list_models(benchpress_home)["step"].to_list() == [100, 200, 300]
    assert main(["models", "remove", "--run", "run-a"]) == 0
    assert store.list_models(benchpress_home).height == 0


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def malform(path: Path) -> None:
    path.write_text(path.read_text().replace('"results": {', '"results": {,', 1))


def schema_violation(path: Path) -> None:
    doc = json.loads(path.read_text())
    doc["results"]["leaderboard_gpqa"]["acc_norm,none"] = "high"
    path.write_text(json.dumps(doc))


def out_of_range(path: Path) -> None:
    doc = json.loads(path.read_text())
    doc["results"]["leaderboard_gpqa"]["acc_norm,none"] = 1.7
    path.write_text(json.dumps(doc))


def mixed_models(path: Path) -> None:
    other = lm_eval_results("someone/else", {"leaderboard_musr": 0.4})
    path.with_name("results_2026-02-01T11-00-00.json").write_text(json.dumps(other))


def merged_runs(path: Path) -> None:
    doc = json.loads(path.read_text())
    doc["configs"]["leaderboard_bbh"]["metadata"]["pretrained"] = "someone/else"
    path.write_text(json.dumps(doc))


def duplicate_task(path: Path) -> None:
    doc = json.loads(path.read_text())
    doc["results"] = {"leaderboard_gpqa": {"alias": "x", "acc_norm,none": 0.61}}
    path.with_name("results_2026-02-01T11-00-00.json").write_text(json.dumps(doc))


def nothing_mapped(path: Path) -> None:
    doc = lm_eval_results("team/run-a/checkpoint-400", {})
    doc["results"] = {"in_house_eval": {"alias": "in_house_eval", "acc,none": 0.5}}
    path.write_text(json.dumps(doc))


def unknown_format(path: Path) -> None:
    path.write_text(json.dumps({"accuracy": 0.5, "model": "x"}))


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (truncate, "truncated JSON"),
        (malform, "malformed JSON"),
        (schema_violation, "leaderboard_gpqa"),
        (out_of_range, "1.7"),
        (mixed_models, "the files hold 2 models"),
        (merged_runs, "the file mixes models"),
        (duplicate_task, "scored twice with different values"),
        (unknown_format, "not a results file of a known format"),
        (nothing_mapped, "no result maps onto a benchmark of ours (the files hold in_house_eval"),
    ],
)
def test_a_bad_file_anywhere_writes_nothing(
    benchpress_home: Path, run_files: dict[int, Path], capsys, spoil, message: str
) -> None:
    assert track(capsys, "run-a", "--from", GLOB)[0] == 0
    before = store_state(benchpress_home)
    spoil(run_files[400])
    code, out, err = track(capsys, "run-a", "--from", GLOB, "--plot", "never.png")
    assert (code, out) == (2, "")
    assert err.startswith("benchpress: error: ")
    assert len(err.splitlines()) == 1
    assert message in err
    assert "ckpts/step-400/results_2026-02-01T1" in err
    assert store_state(benchpress_home) == before
    assert not Path("never.png").exists()


def test_hostile_run_names_are_stored_and_printed_inert(
    benchpress_home: Path, run_files: dict[int, Path], capsys
) -> None:
    run = "run\x1b[2J'; DROP TABLE models; --"
    code, out, err = track(capsys, run, "--from", GLOB, "--targets", "mmlu_pro")
    assert (code, err) == (0, "")
    assert "\x1b" not in out
    assert out.startswith(
        "run run\\x1b[2J'; DROP TABLE models; --: 5 checkpoints stored as private models "
        "run\\x1b[2J'; DROP TABLE models; --@step-100 ..."
    )
    assert store.list_models(benchpress_home)["run"].unique().to_list() == [run]
    code, out, _ = track(capsys, run, "--from", GLOB, "--targets", "mmlu_pro", "--plot", "p.svg")
    assert code == 0
    assert b"\x1b" not in Path("p.svg").read_bytes()
    code = main(["models", "list", "--run", run])
    assert "\x1b" not in capsys.readouterr().out


def test_usage_errors_exit_2_before_anything_is_read(
    benchpress_home: Path, run_files: dict[int, Path], tmp_path: Path, capsys
) -> None:
    for argv, message in (
        (["r", "--from", GLOB, "--require", "mmlu_pro=70"], "uses '='"),
        (["r", "--from", GLOB, "--require", "no_such_bench>=1"], "unknown benchmark"),
        (["r", "--from", GLOB, "--plot", "out.pdf"], "must end in .png or .svg"),
        (["r", "--from", GLOB, "--plot", "missing/out.png"], "does not exist"),
        (["r", "--from", GLOB, "--step-from", "step"], "exactly one capturing group"),
        (["r", "--from", "ckpts/nothing-*/x.json"], "the pattern matches no file"),
        (["r"], "track needs --from PATH"),
        (["r", "--from", GLOB, "--targets", "no_such_bench"], "unknown"),
    ):
        code, out, err = track(capsys, *argv)
        assert (code, out) == (2, ""), argv
        assert message in err, (argv, err)
    odd = write_run(tmp_path / "odd", steps=(1, 2), folder="final-{step}")
    code, _, err = track(capsys, "r", "--from", str(odd[1]))
    assert code == 2
    assert "no step in the path" in err
    assert "--step-from REGEX" in err
    assert not benchpress_home.exists()
    code, out, _ = track(capsys, "r", "--from", "odd/ckpts/*/*.json", "--step-from", r"final-(\d+)")
    assert code == 0
    assert out.splitlines()[0].startswith("run r: 2 checkpoints")


def test_a_checkpoint_name_taken_outside_the_run_is_refused(
    benchpress_home: Path, run_files: dict[int, Path], tmp_path: Path, capsys
) -> None:
    lone = tmp_path / "lone.csv"
    lone.write_text("model,benchmark,score\nm,hle,4\n")
    assert main(["models", "add", "run-a@step-300", "--from", str(lone)]) == 0
    capsys.readouterr()
    before = store_state(benchpress_home)
    code, out, err = track(capsys, "run-a", "--from", GLOB)
    assert (code, out) == (2, "")
    assert "the private model run-a@step-300 exists outside run run-a; remove it first" in err
    assert store_state(benchpress_home) == before


def test_the_run_name_gives_every_checkpoint_its_family(
    benchpress_home: Path, run_files: dict[int, Path], capsys, bp: BenchPress
) -> None:
    code, out, _ = track(capsys, "qwen3-8b", "--from", GLOB, "--targets", "mmlu_pro", "--json")
    assert code == 0
    answer = json.loads(out)
    assert answer["side"]["family"] == "qwen3" and answer["side"]["family_known"]
    files = [str(run_files[500])]
    # a run named as a known model: that model's own family and release date
    side = bp.side_for("qwen3-8b")[0]
    named = bp.predict(
        files, targets=["mmlu_pro"], family=side.family, release_date=side.release_date
    )["mmlu_pro"]
    assert answer["side"]["basis"] == "known model"
    last = answer["checkpoints"][-1]["predictions"][0]
    assert last["score"] == pytest.approx(named.score, rel=1e-12)
    code, out, _ = track(capsys, "qwen3-8b", "--from", GLOB, "--targets", "mmlu_pro")
    assert "run qwen3-8b: known model qwen3-8b: family qwen3, release date" in out
