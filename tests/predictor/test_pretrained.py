"""Named bundled snapshots (`predictor.snapshots.pretrained`) and their probe sets
(`predictor.probe_sets`): `from_pretrained("microsoft/benchpress-v1")` is the paper matrix
alone, pinned, rebuildable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pipelines.bundle_pretrained import build_benchpress_v1, recorded_payload
from pipelines.sources.benchpress_matrix import SEED2_MODEL_CARD
from predictor import BenchPress, SnapshotError
from predictor.probe_sets import PINNED, ProbeBenchmarks, low_cost_allowlist, select_probe_sets
from predictor.snapshots import pretrained as pretrained_module
from predictor.snapshots.pretrained import PRETRAINED, pretrained_root, resolve_pretrained
from predictor.snapshots.reader import content_hash, list_versions, load_snapshot, read_manifest
from predictor.trust.costs import NOT_RUNNABLE
from predictor.trust.next_benchmark import benchmark_costs
from predictor.util.paths import bundled_snapshot_dir
from tests.support.snapshots import assert_same_content
from warehouse.snapshots import SnapshotTables, write_tables

NAME = "microsoft/benchpress-v1"
DIRECTORY = pretrained_root() / PRETRAINED[NAME].directory
# LongFact cells the paper cites to the Seed 2.0 model card are that card's score (higher is
# better), not the column's hallucination rate: the parser gives them ids of their own.
MOVED = {
    "longfact_concepts_score": "longfact_concepts",
    "longfact_objects_score": "longfact_objects",
}


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.from_pretrained(NAME)


@pytest.fixture(scope="module")
def paper() -> dict:
    """The recorded BenchPress payload (the repo's replay copy)."""
    data, _ = recorded_payload()
    return json.loads(data)


def test_the_name_loads_the_paper_matrix_with_its_own_fit(bp: BenchPress, paper: dict) -> None:
    assert bp.version == NAME
    assert bp.manifest["content_hash"] == PRETRAINED[NAME].content_hash
    assert sorted(bp.models) == sorted(m["id"] for m in paper["models"])
    assert sorted(bp.benchmarks) == sorted([b["id"] for b in paper["benchmarks"]] + [*MOVED])
    observed = sum(v is not None for row in paper["observed"] for v in row)
    assert bp.snapshot.cells.height == observed == 2604
    # the LongFact rate columns keep 7 cells each and the card's scores have 5: all four are
    # below the fit's 8 per benchmark
    assert (len(bp.fit_models_), len(bp.fit_benchmarks_)) == (84, 131)
    assert set(bp.benchmarks) - set(bp.fit_benchmarks_) == {*MOVED, *MOVED.values()}
    assert set(bp.snapshot.cells["source"]) == {"benchpress_matrix"}
    assert bp.manifest["counts"] == {
        "benchmarks": 135,
        "cells": 2604,
        "conflicts": 0,
        "models": 84,
        "sources": ["benchpress_matrix"],
    }


def test_every_cell_is_the_papers_number(bp: BenchPress, paper: dict) -> None:
    """Percent cells as published; omnidocbench (a 0-1 fraction there) in percent, and
    omnidocbench_1.5's edit distances (at most 1) as 100 x (1 - d), as its two other cells are.
    A moved LongFact cell is the number in the paper's column it came from, cited to the card."""
    col = {b["id"]: j for j, b in enumerate(paper["benchmarks"])}
    row = {m["id"]: i for i, m in enumerate(paper["models"])}
    moved = 0
    for model, benchmark, score in bp.snapshot.cells.select(
        "model_id", "benchmark_id", "score"
    ).iter_rows():
        column = MOVED.get(benchmark, benchmark)
        i, j = row[model], col[column]
        published = paper["observed"][i][j]
        if column in MOVED.values():  # moved exactly when the card is cited
            cited = (paper["sources"][i][j] or {}).get("url")
            assert (cited == SEED2_MODEL_CARD) == (benchmark in MOVED), (model, benchmark)
            moved += benchmark in MOVED
        if benchmark == "omnidocbench_1.5" and published <= 1:
            published = 100.0 * (1.0 - published)
        factor = 100.0 if benchmark == "omnidocbench" else 1.0
        assert score == pytest.approx(published * factor, abs=1e-9), (model, benchmark)
    assert moved == 10  # five models' Concepts and Objects


def test_provenance_is_the_recorded_payload(bp: BenchPress) -> None:
    _, entry = recorded_payload()
    scores = bp.scores()
    assert set(scores["payload_sha256"]) == {entry["sha256"]}
    assert set(scores["url"]) == {"https://microsoft.github.io/benchpress/data.json"}
    assert bp.manifest["payload"]["sha256"] == entry["sha256"]


def test_names_match_ignoring_case_and_other_arguments_keep_working(bp: BenchPress) -> None:
    assert BenchPress.from_pretrained("Microsoft/BenchPress-v1").version == NAME
    bundled = list_versions(bundled_snapshot_dir())[-1]
    assert BenchPress.from_pretrained("latest").version == bundled
    assert BenchPress.from_pretrained(bundled).version == bundled
    assert BenchPress.from_pretrained(str(DIRECTORY)).manifest == bp.manifest
    assert resolve_pretrained("latest") is None and resolve_pretrained(bundled) is None


def test_an_unknown_hub_name_lists_the_bundled_ones() -> None:
    with pytest.raises(SnapshotError) as caught:
        BenchPress.from_pretrained("microsoft/benchpress-v9")
    assert str(caught.value) == (
        "unknown pretrained snapshot 'microsoft/benchpress-v9'; bundled: "
        'microsoft/benchpress-v1 (or give a version such as 2026.12.07.3, "latest" or a '
        "snapshot directory)"
    )


@pytest.fixture
def copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A writable copy of the pretrained data, used in place of the package's."""
    root = tmp_path / "pretrained"
    shutil.copytree(pretrained_root(), root)
    for path in root.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    monkeypatch.setattr(pretrained_module, "pretrained_root", lambda: root)
    return root / PRETRAINED[NAME].directory


def test_a_modified_file_is_refused(copied: Path) -> None:
    with (copied / "cells.parquet").open("ab") as handle:
        handle.write(b"\0")
    with pytest.raises(SnapshotError, match=r"cells.parquet has sha256 .* manifest says"):
        BenchPress.from_pretrained(NAME)


def test_other_content_with_a_consistent_manifest_is_not_the_pinned_name(copied: Path) -> None:
    """A directory rebuilt from other data verifies against its own manifest, but is not
    what the name stands for."""
    snapshot = load_snapshot(DIRECTORY)
    fewer = SnapshotTables(
        snapshot.cells.head(100),
        snapshot.models,
        snapshot.benchmarks,
        snapshot.aliases,
        snapshot.conflicts,
        snapshot.fit,
    )
    shutil.rmtree(copied)
    hashes = write_tables(fewer, copied)
    manifest = {**snapshot.manifest, "files": hashes, "content_hash": content_hash(hashes)}
    (copied / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SnapshotError) as caught:
        BenchPress.from_pretrained(NAME)
    assert str(caught.value) == (
        f"pretrained snapshot {NAME}: content {content_hash(hashes)[:12]}... is not the "
        f"pinned {PRETRAINED[NAME].content_hash[:12]}... (rebuilt with other code or data?)"
    )


def test_a_missing_directory_says_how_to_build_it(copied: Path) -> None:
    shutil.rmtree(copied)
    with pytest.raises(SnapshotError, match=r"python -m pipelines.bundle_pretrained"):
        BenchPress.from_pretrained(NAME)


# ---------------------------------------------------------------------------- probe sets
def test_the_article_probe_sets_are_those_of_the_paper_snapshot(bp: BenchPress) -> None:
    sets = ProbeBenchmarks.pinned(bp)
    assert sets is not None
    assert sets.default == ProbeBenchmarks.DEFAULT
    assert sets.low_cost == ProbeBenchmarks.LOW_COST
    assert ProbeBenchmarks.for_snapshot(bp) is sets  # pinned: nothing is run
    costs = dict(zip(bp.fit_benchmarks_, benchmark_costs(bp), strict=True))
    for probes in (sets.default, sets.low_cost):
        assert len(probes) == len(set(probes)) == 5
        assert set(probes) <= set(bp.fit_benchmarks_) and not set(probes) & NOT_RUNNABLE
    assert all(costs[b] <= 1.0 for b in sets.low_cost)
    assert sum(costs[b] for b in sets.low_cost) < sum(costs[b] for b in sets.default)
    assert set(sets.low_cost) <= set(low_cost_allowlist(bp))


def test_every_bundled_snapshot_has_pinned_probe_sets() -> None:
    """Rebuilding a bundled snapshot changes its hash: re-pin its sets (slow test below)."""
    main = bundled_snapshot_dir()
    hashes = [read_manifest(main / v)["content_hash"] for v in list_versions(main)]
    hashes += [entry.content_hash for entry in PRETRAINED.values()]
    assert sorted(hashes) == sorted(PINNED)


@pytest.mark.slow
@pytest.mark.parametrize("which", ["pretrained", "main"])
def test_pinned_probe_sets_are_what_selection_picks(bp: BenchPress, which: str) -> None:
    if which == "main":
        main = bundled_snapshot_dir()
        bp = BenchPress(load_snapshot(main / list_versions(main)[-1]))
    assert select_probe_sets(bp) == PINNED[bp.manifest["content_hash"]]


# ---------------------------------------------------------------------------- rebuilding
@pytest.mark.slow
def test_rebuilding_from_the_recorded_payload_gives_the_pinned_content(tmp_path: Path) -> None:
    rebuilt = build_benchpress_v1(tmp_path / "v1")
    shipped = read_manifest(DIRECTORY)
    assert PRETRAINED[NAME].content_hash == shipped["content_hash"]
    assert_same_content(rebuilt, shipped, tmp_path / "v1", DIRECTORY)
