"""Own matrices (`BenchPress.fit(frame).save()`) are kept in a private line of their
own and never become the public `latest`; `save(path)` reads back with `load(Path(path))` and
`from_pretrained(path)`; `benchpress snapshots remove` removes own matrices only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from predictor import BenchPress
from predictor.cli import main
from predictor.fit.own_matrix import save_snapshot
from predictor.snapshots.reader import SnapshotError, list_versions
from predictor.snapshots.stores import LocalStore
from predictor.util.paths import bundled_snapshot_dir

SMALL = {"rank": 2, "n_chains": 2, "n_burn": 5, "n_samples": 5}  # a quick fit
OWN_BENCHMARKS = ["gpqa_diamond", *(f"team_eval_{j}" for j in range(7))]
BUNDLED = list_versions(bundled_snapshot_dir())[-1]  # the public latest of a fresh home


def team_frame(shift: float = 0.0) -> pl.DataFrame:
    """A team's own matrix: 15 models x 8 benchmarks (one of them public)."""
    rows = [
        {
            "model": f"team-model-{i}",
            "benchmark": bench,
            "score": 12.0 + 4.5 * i + 3.0 * j + (i * j) % 4 + shift,
        }
        for i in range(15)
        for j, bench in enumerate(OWN_BENCHMARKS)
    ]
    return pl.DataFrame(rows)


@pytest.fixture(scope="module")
def fitted() -> BenchPress:
    return BenchPress.fit(team_frame(), **SMALL)


@pytest.fixture(scope="module")
def refitted() -> BenchPress:
    return BenchPress.fit(team_frame(shift=2.0), **SMALL)


PROBES = {"gpqa_diamond": 60.0, "team_eval_0": 40.0, "team_eval_3": 55.0}


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_save_without_a_store_keeps_the_public_latest(
    benchpress_home: Path, fitted: BenchPress, capsys: pytest.CaptureFixture[str]
) -> None:
    version = fitted.save()
    private = benchpress_home / "private" / "snapshots"
    assert (private / version / "manifest.json").is_file()
    assert not (benchpress_home / "snapshots").exists()  # the public line is untouched
    assert version not in list_versions(bundled_snapshot_dir())  # one name, one matrix

    public = BenchPress.load()
    assert public.version == BUNDLED and "mmlu_pro" in public.benchmarks
    answer = cli_json(capsys, "predict", "--scores", "gpqa_diamond=80")
    assert answer["version"] == BUNDLED
    rows = {row["benchmark"]: row for row in answer["predictions"]}
    expected = public.predict({"gpqa_diamond": 80.0})["mmlu_pro"]
    assert (rows["mmlu_pro"]["score"], rows["mmlu_pro"]["low"], rows["mmlu_pro"]["high"]) == (
        pytest.approx(expected.score),
        pytest.approx(expected.low),
        pytest.approx(expected.high),
    )

    # loading it back is explicit: private=True, or the path of the private line
    own = BenchPress.load(private=True)
    assert (own.version, own.benchmarks) == (version, fitted.benchmarks)
    assert own.manifest["origin"] == "own"
    assert own.predict(PROBES) == fitted.predict(PROBES)
    assert BenchPress.load(version, private=True).version == version
    with pytest.raises(SnapshotError) as caught:
        BenchPress.load(version)
    assert f"{version} is one of your own matrices" in str(caught.value)
    assert f"BenchPress.load('{version}', private=True)" in str(caught.value)
    own_cli = cli_json(capsys, "predict", "--scores", "gpqa_diamond=60", "--store", str(private))
    assert own_cli["version"] == version
    assert {row["benchmark"] for row in own_cli["predictions"]} == set(OWN_BENCHMARKS)


def test_the_public_stores_are_refused_as_the_target(
    benchpress_home: Path,
    fitted: BenchPress,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(SnapshotError, match="into the public snapshot store .*: it would become"):
        fitted.save(benchpress_home / "snapshots")
    shared = tmp_path / "shared-store"
    monkeypatch.setenv("BENCHPRESS_PUBLISH_URI", f"file://{shared}")
    with pytest.raises(SnapshotError, match="into the shared store BENCHPRESS_PUBLISH_URI"):
        fitted.save(str(shared))
    assert not (benchpress_home / "snapshots").exists() and not shared.exists()
    with pytest.raises(SnapshotError, match="no own matrix saved yet"):
        BenchPress.load(private=True)


def test_save_path_reads_back_with_load_and_from_pretrained(
    benchpress_home: Path, fitted: BenchPress, refitted: BenchPress, tmp_path: Path
) -> None:
    store = tmp_path / "team-snapshots"
    first = fitted.save(store)
    expected = fitted.predict(PROBES)
    for bp in (
        BenchPress.from_pretrained(store),
        BenchPress.from_pretrained(str(store)),
        BenchPress.load(store),
        BenchPress.load(store / first),  # one snapshot folder
    ):
        assert bp.version == first
        assert bp.predict(PROBES) == expected
    second = refitted.save(store)
    assert second != first
    assert BenchPress.load(store).version == second  # a store: its newest version
    assert BenchPress.from_pretrained(store).predict(PROBES) == refitted.predict(PROBES)
    assert BenchPress.load(first, store=store).version == first  # pinned, as before
    digest = BenchPress.load(store / first).snapshot.digest
    assert BenchPress.from_pretrained(f"{store / first}@{digest}").version == first
    with pytest.raises(SnapshotError, match="holds no snapshot"):
        BenchPress.load(tmp_path)
    # text given to load is always a version (never a path); a folder's name says what to do
    with pytest.raises(SnapshotError) as caught:
        BenchPress.load(str(store))
    assert str(caught.value) == (
        f"not a snapshot version: {str(store)!r} is a folder; load a folder with "
        f"BenchPress.load(Path({str(store)!r})) or BenchPress.from_pretrained({str(store)!r})"
    )
    with pytest.raises(SnapshotError, match="not a snapshot version"):  # a store: versions
        BenchPress.load(str(store), store=store)


def test_snapshots_remove_removes_own_matrices_only(
    benchpress_home: Path,
    fitted: BenchPress,
    refitted: BenchPress,
    capsys: pytest.CaptureFixture[str],
) -> None:
    private = benchpress_home / "private" / "snapshots"
    first, second = fitted.save(), refitted.save()
    listed = cli_json(capsys, "snapshots", "list", "--private")
    assert [row["version"] for row in listed] == [first, second]

    assert main(["snapshots", "remove", second]) == 0
    assert capsys.readouterr().out == f"removed snapshot {second} from {private}\n"
    assert list_versions(private) == [first]
    assert json.loads((private / "index.json").read_text())["versions"] == [first]
    assert BenchPress.load(private=True).version == first  # the newest left
    assert cli_json(capsys, "snapshots", "remove", first) == {
        "version": first,
        "store": str(private),
        "removed": True,
    }
    assert list_versions(private) == []

    # a version that is not there: exit 1, naming where it looked
    assert main(["snapshots", "remove", first]) == 1
    assert f"snapshot {first} not found in your private line" in capsys.readouterr().err
    # one that ships with the package, or a misspelt one: exit 2
    assert main(["snapshots", "remove", BUNDLED]) == 2
    assert "ships with the package and cannot be removed" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        main(["snapshots", "remove", "2026.12.07.02"])
    assert usage.value.code == 2
    assert "the canonical spelling is 2026.12.07.2" in capsys.readouterr().err


def test_published_public_versions_are_refused_and_old_own_saves_cleaned_up(
    benchpress_home: Path,
    fitted: BenchPress,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    public = LocalStore(benchpress_home / "snapshots")
    public.publish_dir(bundled_snapshot_dir() / BUNDLED)  # a published public version
    assert main(["snapshots", "remove", BUNDLED]) == 2
    err = capsys.readouterr().err
    assert f"snapshot {BUNDLED} in {public.root} is a published public version" in err
    assert list_versions(public.root) == [BUNDLED]

    # an own matrix an older release saved into the public store made it the latest ...
    stray = save_snapshot(fitted.snapshot, public)
    assert BenchPress.load().version == stray
    assert main(["snapshots", "remove", stray]) == 0
    assert capsys.readouterr().out == f"removed snapshot {stray} from {public.root}\n"
    assert BenchPress.load().version == BUNDLED  # ... and is gone again
    assert list_versions(public.root) == [BUNDLED]

    # --store: a folder save(path) wrote; public versions there are refused too
    team = tmp_path / "team"
    version = fitted.save(team)
    shutil.copytree(bundled_snapshot_dir() / BUNDLED, team / BUNDLED)
    assert main(["snapshots", "remove", BUNDLED, "--store", str(team)]) == 2
    assert "is a published public version" in capsys.readouterr().err
    assert main(["snapshots", "remove", version, "--store", str(team)]) == 0
    assert list_versions(team) == [BUNDLED]
