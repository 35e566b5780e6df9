"""`benchpress track`'s plot draws each mark once and names what it draws, and the command
says which results of the checkpoints' files it did not use.

The plot is read back from its SVG (every series and panel carries a gid, which the SVG keeps
as an element id; matplotlib writes each text, drawn as paths, as a comment beside it). The
command runs on real lm-eval results files (the vendored real file's structure, as
tests/warehouse/test_track.py builds them) into a temporary BENCHPRESS_HOME."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from predictor.cli import main
from predictor.tracking.plot import TargetSeries, log_steps, render
from tests.warehouse.test_track import checkpoint_values, lm_eval_results

SVG = "{http://www.w3.org/2000/svg}"


def parse(data: bytes) -> ET.Element:
    return ET.fromstring(data, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))


def group(root: ET.Element, gid: str) -> ET.Element | None:
    return next((g for g in root.iter(f"{SVG}g") if g.get("id") == gid), None)


def ids(root: ET.Element) -> list[str]:
    return [el.get("id") for el in root.iter() if el.get("id")]


def texts(element: ET.Element) -> list[str]:
    """The texts drawn (as the comments matplotlib writes beside them, entities decoded)."""
    return [html.unescape(node.text.strip()) for node in element.iter() if node.tag is ET.Comment]


def path_points(element: ET.Element) -> list[tuple[float, float]]:
    """Every (x, y) of the paths under `element`."""
    points = []
    for path in element.iter(f"{SVG}path"):
        numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", path.get("d", ""))]
        points += list(zip(numbers[0::2], numbers[1::2], strict=False))
    return points


def marker_count(line: ET.Element) -> int:
    """Markers of a plotted line: matplotlib draws each as a `use` of one marker path."""
    return sum(1 for _ in line.iter(f"{SVG}use"))


def x_ticks(panel: ET.Element) -> list[tuple[float, str]]:
    """(x position, label) of the panel's major x ticks."""
    ticks = []
    for tick in panel.iter(f"{SVG}g"):
        if not re.fullmatch(r"xtick_\d+", tick.get("id", "")):
            continue
        use = next(tick.iter(f"{SVG}use"), None)
        if use is None:
            continue
        labels = texts(tick)
        ticks.append((float(use.get("x")), labels[0] if labels else ""))
    return ticks


def test_a_single_checkpoint_draws_its_interval_and_the_legend_says_so() -> None:
    series = [TargetSeries("mmlu_pro", [40.0], [30.0], [52.0], [False])]
    data, counts = render([500], series, {"gpqa_diamond": [31.0]}, "svg")
    root = parse(data)
    band = group(root, "band-0")
    assert band is not None and counts["bands"] == 1
    ys = [y for _, y in path_points(band)]
    assert max(ys) - min(ys) > 20  # a bar from 30 to 52 (a band over one step has no width)
    (style,) = [p.get("style") for p in band.iter(f"{SVG}path")]
    assert "stroke-width: 6" in style
    legend = group(root, "legend")
    assert texts(legend) == ["predicted", "90% interval"]
    # the legend's interval mark is a bar like the one drawn (a line), not a band's patch
    patches = [g for g in legend.iter(f"{SVG}g") if g.get("id", "").startswith("patch_")]
    assert len(patches) == 1  # the legend's frame only


def test_a_target_observed_at_some_steps_is_drawn_once() -> None:
    steps = [100, 200, 300, 400]
    mmlu = TargetSeries(
        "mmlu_pro",
        [40, 44, 47, 50],
        [33, 44, 40, 43],
        [47, 44, 54, 57],
        [False, True, False, False],
    )
    probes = {"mmlu_pro": [None, 44.0, None, None], "gpqa_diamond": [30.0, 31.0, 33.0, 34.0]}
    data, counts = render(steps, [mmlu], probes, "svg")
    root = parse(data)
    # on its own panel: predicted markers at the 3 predicted steps, the observed one a square
    assert marker_count(group(root, "trajectory-0")) == 3
    assert marker_count(group(root, "target-observed-0")) == 1
    # and not again in the probe panel, which keeps the other probe
    probes_panel = group(root, "panel-probes")
    assert [i for i in ids(probes_panel) if i.startswith("probe-")] == ["probe-0"]
    assert "mmlu_pro" not in texts(probes_panel) and "gpqa_diamond" in texts(probes_panel)
    assert counts["probe_series"] == 1
    legend = group(root, "legend")
    assert texts(legend) == ["predicted", "90% interval", "observed"]


def test_the_legend_names_only_the_marks_drawn() -> None:
    """Only probes observed throughout: no predicted line, band or observed square anywhere,
    so the legend has none; the P(all) panel names its line and its 0.9 line."""
    probe = TargetSeries("gpqa_diamond", [30, 31], [30, 31], [30, 31], [True, True])
    data, _ = render(
        [100, 200],
        [probe],
        {"gpqa_diamond": [30.0, 31.0]},
        "svg",
        p_all=[0.2, 0.4],
        criteria="gpqa_diamond>=32",
    )
    root = parse(data)
    assert texts(group(root, "legend")) == ["required threshold"]
    assert not [i for i in ids(root) if re.fullmatch(r"(trajectory|band)-\d+", i)]
    assert texts(group(root, "panel-p-all"))[-2:] == ["P(all)", "P = 0.9"]
    # the threshold on the probe panel is red like the legend's, and named in its legend
    assert "gpqa_diamond>=32" in texts(group(root, "panel-probes"))


@pytest.mark.parametrize(
    ("steps", "log"),
    [
        ([1000, 2000, 4000, 8000], True),
        ([250, 500, 1000, 2000, 4000], True),
        ([100, 200, 300, 400], False),
        ([1000, 2000], False),
        ([0, 1000, 2000, 4000], False),
    ],
)
def test_steps_that_double_get_a_log_axis(steps: list[int], log: bool) -> None:
    assert log_steps(steps) is log
    series = [TargetSeries("mmlu_pro", [40.0 + s / 1000 for s in steps], [30.0] * len(steps),
                           [55.0] * len(steps), [False] * len(steps))]  # fmt: skip
    root = parse(render(steps, series, {}, "svg")[0])
    panel = group(root, "panel-target-0")
    ticks = x_ticks(panel)
    if log:
        # one tick per step, labelled as the step, evenly spaced: a log-scaled axis
        assert [label for _, label in ticks] == [str(s) for s in steps]
        gaps = [b[0] - a[0] for a, b in zip(ticks, ticks[1:], strict=False)]
        assert max(gaps) - min(gaps) < 0.5
        assert "step (log scale)" in texts(panel)
    else:
        assert "step (log scale)" not in texts(panel) and "step" in texts(panel)


# ---------------------------------------------------------------------------- the command
def write_checkpoint(root: Path, step: int, metric_of: dict[str, str] | None = None) -> Path:
    """An lm-eval results file of one checkpoint; `metric_of` renames a task's metric key."""
    doc = lm_eval_results(f"team/run-b/checkpoint-{step}", checkpoint_values(step))
    for task, key in (metric_of or {}).items():
        result = doc["results"][task]
        old = next(k for k in result if k.endswith(",none") and "_stderr" not in k)
        result[key] = result.pop(old)
        result[key.replace(",", "_stderr,")] = result.pop(old.replace(",", "_stderr,"))
    path = root / "ckpts" / f"step-{step}" / "results_2026-02-01T10-00-00.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_track_says_which_metrics_of_the_checkpoints_it_ignored(
    benchpress_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    write_checkpoint(tmp_path, 100)
    # at step 200, GPQA's file holds acc, not the acc_norm the benchmark is scored by
    ignored = write_checkpoint(tmp_path, 200, {"leaderboard_gpqa": "acc,none"})
    code = main(["predict", "--from", str(ignored), "--targets", "mmlu_pro"])
    said_by_predict = capsys.readouterr().out
    assert code == 0
    assert "other metric than the benchmark's: leaderboard_gpqa (acc,none)" in said_by_predict

    code = main(["track", "run-b", "--from", "ckpts/step-*/results_*.json", "--targets",
                 "mmlu_pro", "--plot", "run.svg"])  # fmt: skip
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert (
        "other metric than the benchmark's (not used): leaderboard_gpqa (acc,none) at step 200"
        in out.splitlines()
    )
    code = main(["track", "run-b", "--from", "ckpts/step-*/results_*.json", "--targets",
                 "mmlu_pro", "--json"])  # fmt: skip
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    by_step = {c["step"]: c["not_used"]["other_metric"] for c in payload["checkpoints"]}
    assert by_step == {100: [], 200: ["leaderboard_gpqa (acc,none)"]}
