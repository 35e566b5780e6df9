"""The `track --plot` picture, read back from its SVG: a dashed line per `--require` threshold
on its benchmark's panel, a legend for observed versus predicted, a probe observed at every
checkpoint drawn once (in the probe panel, not again as a target), and no empty grid cell."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from predictor.tracking.checkpoints import Criterion
from predictor.tracking.plot import TargetSeries, render

STEPS = [100, 200, 300]
SVG = "{http://www.w3.org/2000/svg}"


def targets() -> list[TargetSeries]:
    """mmlu_pro predicted (observed at 200), gpqa_diamond observed everywhere, ifeval predicted."""
    return [
        TargetSeries("mmlu_pro", [10, 12, 15], [5, 6, 9], [15, 18, 21], [False, True, False]),
        TargetSeries("gpqa_diamond", [20, 22, 25], [20, 22, 25], [20, 22, 25], [True] * 3),
        TargetSeries("ifeval", [30, 32, 35], [25, 26, 29], [35, 38, 41], [False] * 3),
    ]


PROBES = {"gpqa_diamond": [20.0, 22.0, 25.0], "hle": [2.0, 3.0, None]}
REQUIRE = "mmlu_pro>=14, gpqa_diamond>=24"  # as the command passes them: joined text


def parse(data: bytes) -> ET.Element:
    """The SVG with its comments: matplotlib writes each text (drawn as paths) as a comment."""
    return ET.fromstring(data, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))


def groups(root: ET.Element, pattern: str) -> dict[str, ET.Element]:
    return {g.get("id"): g for g in root.iter(f"{SVG}g") if re.fullmatch(pattern, g.get("id", ""))}


def texts(element: ET.Element) -> list[str]:
    return [node.text.strip() for node in element.iter() if node.tag is ET.Comment]


def panel_box(panel: ET.Element) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) of a panel's background patch."""
    path = next(g for g in panel if g.get("id", "").startswith("patch_")).find(f"{SVG}path")
    numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", path.get("d"))]
    xs, ys = numbers[0::2], numbers[1::2]
    return min(xs), min(ys), max(xs), max(ys)


@pytest.fixture(scope="module")
def plot() -> ET.Element:
    data, _ = render(STEPS, targets(), PROBES, "svg", title="run x", p_all=[0.1, 0.5, 0.95],
                     criteria=REQUIRE)  # fmt: skip
    return parse(data)


def test_each_require_threshold_is_one_line_on_its_benchmarks_panel(plot: ET.Element) -> None:
    panels = groups(plot, r"panel-.+")
    lines = {name: sorted(groups(panel, r"threshold-\d+")) for name, panel in panels.items()}
    # mmlu_pro's on its target panel; gpqa_diamond, a probe throughout, on the probe panel
    assert lines == {
        "panel-target-0": ["threshold-0"],
        "panel-target-2": [],
        "panel-probes": ["threshold-1"],
        "panel-p-all": [],
    }
    assert len(groups(plot, r"threshold-\d+")) == len(REQUIRE.split(","))


def test_thresholds_from_criterion_objects_too() -> None:
    rules = [Criterion("ifeval", ">=", 33.0)]
    data, _ = render(STEPS, targets(), PROBES, "svg", p_all=[0.1, 0.2, 0.3], criteria=rules)
    panels = groups(parse(data), r"panel-.+")
    assert [name for name, p in panels.items() if groups(p, r"threshold-\d+")] == ["panel-target-2"]


def test_a_legend_says_observed_and_predicted(plot: ET.Element) -> None:
    (legend,) = groups(plot, r"legend").values()
    assert texts(legend) == ["predicted", "90% interval", "observed", "required threshold"]


def test_a_probe_observed_at_every_checkpoint_is_not_a_target_panel(plot: ET.Element) -> None:
    panels = groups(plot, r"panel-.+")
    assert sorted(panels) == ["panel-p-all", "panel-probes", "panel-target-0", "panel-target-2"]
    assert not groups(plot, r"(trajectory|band)-1")  # gpqa_diamond: no predicted line or band
    titles = [t for name, p in panels.items() if name.startswith("panel-target") for t in texts(p)]
    assert "gpqa_diamond" not in titles and {"mmlu_pro", "ifeval"} <= set(titles)


@pytest.mark.parametrize("n_targets", [1, 2, 3, 4, 5])
def test_the_grid_has_no_empty_cell(n_targets: int) -> None:
    series = [
        TargetSeries(f"bench_{t}", [10, 12, 15], [5, 6, 9], [15, 18, 21], [False] * 3)
        for t in range(n_targets)
    ]
    data, _ = render(STEPS, series, PROBES, "svg", p_all=[0.1, 0.5, 0.9], criteria="bench_0>=11")
    root = parse(data)
    boxes = [panel_box(p) for p in groups(root, r"panel-.+").values()]
    assert len(boxes) == n_targets + 2
    # every row of panels reaches from the left edge of the grid to its right edge
    left = min(b[0] for b in boxes)
    right = max(b[2] for b in boxes)
    rows: dict[float, list[tuple[float, ...]]] = {}
    for box in boxes:
        rows.setdefault(round(box[1]), []).append(box)
    for row in rows.values():
        assert min(b[0] for b in row) == pytest.approx(left, abs=40), row
        assert max(b[2] for b in row) == pytest.approx(right, abs=2), row
    assert len(rows) == -(-len(boxes) // 3)  # rows of up to three
    width = float(root.get("width").removesuffix("pt"))
    assert right <= width and left >= 0
