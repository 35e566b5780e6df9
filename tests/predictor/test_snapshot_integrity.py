"""Snapshot integrity (issue 17): a version's manifest is covered by a digest that its digest
file and the store's index record and that consumers pin (`VERSION@sha256:...`); every file is
read once and parsed from the bytes that were hashed; symlinks, special files and unlisted files
are refused before anything is read; a version has one ASCII spelling.

Real snapshots in tmp_path, published with `warehouse.snapshots.publish` (the bundled snapshot's
tables, or a tiny matrix where only the store mechanics matter), the real CLI
(`predictor.cli.main`) and a real http.server on loopback for the remote store."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import threading
import time
from collections import Counter
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from predictor import BenchPress
from predictor.cli import main
from predictor.snapshots import pretrained as pretrained_module
from predictor.snapshots import stores as store_module
from predictor.snapshots.pretrained import PRETRAINED, pretrained_root
from predictor.snapshots.reader import (
    BrokenSnapshotWarning,
    SnapshotError,
    check_version,
    content_hash,
    list_versions,
    load_snapshot,
    manifest_digest,
    resolve_version,
    verify,
)
from predictor.snapshots.stores import open_store, store_id, write_index
from predictor.util.paths import bundled_snapshot_dir
from tests.support.snapshots import StaticStore, resign, writable_copy, write_manifest_text
from warehouse.snapshots import SnapshotTables, next_version, publish, stage

BUNDLED = list_versions(bundled_snapshot_dir())[-1]
V = "2099.01.01.1"
SCORES = "gpqa_diamond=80,hle=20"
NO_PIN = "(not the manifest that was pinned)"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def recorded_digest(folder: Path) -> str:
    return (folder / "digest").read_text().strip()


def manifest_of(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def edited(folder: Path, field: str, value: object) -> dict:
    """The manifest with one (dotted) field changed, written back; the digest file untouched."""
    manifest = manifest_of(folder)
    *parents, leaf = field.split(".")
    node = manifest
    for key in parents:
        node = node[key]
    node[leaf] = value
    write_manifest_text(folder, manifest)
    return manifest


# --------------------------------------------------------------------------------- stores
@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding the bundled snapshot's tables published again as V (digest file and
    index written by the publisher)."""
    root = tmp_path_factory.mktemp("published")
    snap = load_snapshot(bundled_snapshot_dir() / BUNDLED)
    tables = SnapshotTables(
        snap.cells,
        snap.models,
        snap.benchmarks,
        snap.aliases,
        snap.conflicts,
        snap.fit,
        snap.residuals,
    )
    facts = {key: snap.manifest[key] for key in ("counts", "fit_params", "quality")}
    _, staged = stage(tables, root / "staging", facts)
    assert publish(staged, root / "store", today=date(2099, 1, 1), elsewhere=[]).version == V
    return root / "store"


@pytest.fixture
def store(published: Path, tmp_path: Path) -> Path:
    return writable_copy(published, tmp_path / "store")


def tiny_tables(score: float, padding: int = 0) -> SnapshotTables:
    """A two-cell matrix; `padding` floats in fit.json make it large (a slower check)."""
    cells = pl.DataFrame(
        {"model_id": ["m1", "m2"], "benchmark_id": ["b1", "b1"], "score": [score, 40.0]}
    )
    return SnapshotTables(
        cells=cells,
        models=pl.DataFrame({"model_id": ["m1", "m2"]}),
        benchmarks=pl.DataFrame({"benchmark_id": ["b1"], "scale": ["percent"]}),
        aliases=pl.DataFrame({"kind": ["model"], "source": ["s"], "name": ["M1"], "id": ["m1"]}),
        conflicts=pl.DataFrame(
            {"model_id": [], "benchmark_id": []},
            schema={"model_id": pl.String, "benchmark_id": pl.String},
        ),
        fit={"model_ids": ["m1", "m2"], "benchmark_ids": ["b1"], "padding": [0.5] * padding},
    )


@pytest.fixture
def tiny_store(tmp_path: Path) -> Path:
    _, staged = stage(tiny_tables(71.5), tmp_path / "staging", {})
    publish(staged, tmp_path / "tiny", today=date(2099, 1, 1), elsewhere=[])
    return writable_copy(tmp_path / "tiny", tmp_path / "tiny-store")


# ------------------------------------------------------------- 1: a digest over the manifest
def test_publishing_records_the_manifest_digest_in_its_digest_file_and_the_index(
    published: Path,
) -> None:
    manifest = manifest_of(published / V)
    canonical = json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    digest = "sha256:" + hashlib.sha256(canonical.encode("ascii")).hexdigest()
    assert (published / V / "digest").read_text() == digest + "\n"
    assert json.loads((published / "index.json").read_text()) == {
        "format_version": 1,
        "versions": [V],
        "digests": {V: digest},
    }
    assert sorted(p.name for p in (published / V).iterdir()) == sorted(
        [*manifest["files"], "manifest.json", "digest"]
    )
    assert load_snapshot(published / V).digest == digest


@pytest.mark.parametrize(
    ("field", "value"),
    [("counts.models", 1), ("quality.holdout_medae", 0.01), ("parent", BUNDLED)],
)
def test_an_edited_manifest_field_fails_verify_load_and_list(
    store: Path, capsys: pytest.CaptureFixture[str], field: str, value: object
) -> None:
    original = recorded_digest(store / V)
    found = manifest_digest(edited(store / V, field, value))
    expected = (
        f"snapshot {V}: manifest.json has digest {found}, its digest file records {original} "
        "(manifest changed after publishing?)"
    )
    with pytest.raises(SnapshotError) as caught:
        verify(store / V)
    assert str(caught.value) == expected
    with pytest.raises(SnapshotError) as caught:
        BenchPress.load(V, store=store)
    assert str(caught.value) == expected

    code, out, err = cli(capsys, "snapshots", "list", "--store", str(store), "--json")
    [row] = json.loads(out)
    assert code == 0 and f"broken snapshot {V}: {expected}" in err
    assert (row["status"], row["models"], row["parent"], row["digest"]) == ("broken", None, "", "")
    assert row["error"] == expected
    code, out, _ = cli(capsys, "snapshots", "verify", "--store", str(store), "--json")
    assert code == 1 and json.loads(out)[0]["error"] == expected


def test_a_manifest_re_signed_by_hand_is_caught_by_the_store_index(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = recorded_digest(store / V)
    forged = resign(store / V, {**manifest_of(store / V), "counts": {"models": 1}})
    expected = (
        f"snapshot {V}: manifest.json has digest {forged}, the store's index.json records "
        f"{original} (manifest changed after publishing?)"
    )
    for read in (
        lambda: verify(store / V, V),
        lambda: open_store(store).read_manifest(V),
        lambda: BenchPress.load(V, store=store),
    ):
        with pytest.raises(SnapshotError) as caught:
            read()
        assert str(caught.value) == expected
    code, out, _ = cli(capsys, "snapshots", "list", "--store", str(store), "--json")
    assert json.loads(out)[0]["status"] == "broken"


def test_pinning_by_digest_loads_exactly_that_manifest(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    digest = recorded_digest(store / V)
    bp = BenchPress.load(f"{V}@{digest}", store=store)
    assert (bp.version, bp.snapshot.digest, bp.snapshot.digest_note) == (V, digest, "")

    # manifest, digest file and index all rewritten consistently: only the pin can tell
    forged = resign(store / V, {**manifest_of(store / V), "parent": BUNDLED}, index=True)
    assert verify(store / V, V)["parent"] == BUNDLED
    expected = f"snapshot {V}: expected digest {digest}, found {forged} {NO_PIN}"
    with pytest.raises(SnapshotError) as caught:
        BenchPress.load(f"{V}@{digest}", store=store)
    assert str(caught.value) == expected
    pinned = f"{V}@{digest}"
    code, out, err = cli(
        capsys, "predict", "--scores", SCORES, "--version", pinned, "--store", str(store)
    )
    assert (code, out, err) == (1, "", f"benchpress: error: {expected}\n")


@pytest.mark.parametrize(
    "digest",
    ["sha256:" + "a" * 12, "sha256:" + "A" * 64, "a" * 64, "sha256:", "sha256:" + "a" * 65],
    ids=["prefix", "upper-case", "no-algorithm", "empty", "too-long"],
)
def test_a_digest_prefix_or_malformed_pin_is_refused(
    store: Path, capsys: pytest.CaptureFixture[str], digest: str
) -> None:
    pin = f"{V}@{digest}"
    expected = (
        f"not a snapshot digest: {digest!r} in {pin!r} (pin with the full digest, sha256: and "
        "64 lowercase hex digits, as `benchpress snapshots show` prints it; a prefix is not "
        "accepted)"
    )
    with pytest.raises(SnapshotError) as caught:
        BenchPress.load(pin, store=store)
    assert str(caught.value) == expected
    code, out, err = cli(capsys, "predict", "--scores", SCORES, "--version", pin)
    assert code == 2 and out == "" and f"argument --version: {expected}" in err


def test_latest_cannot_be_pinned(store: Path) -> None:
    pin = "latest@" + recorded_digest(store / V)
    with pytest.raises(SnapshotError, match="a digest pins a version, not latest"):
        BenchPress.load(pin, store=store)


def test_list_show_and_verify_print_the_digest(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    digest = recorded_digest(store / V)
    code, out, _ = cli(capsys, "snapshots", "list", "--store", str(store), "--json")
    assert code == 0 and json.loads(out)[0]["digest"] == digest
    code, out, _ = cli(capsys, "snapshots", "list", "--store", str(store))
    header, line = out.splitlines()
    assert header.split()[:6] == [
        "version",
        "models",
        "benchmarks",
        "cells",
        "content_hash",
        "digest",
    ]
    assert line.split()[5] == digest[:19]  # sha256: and 12 hex digits in the table

    code, out, _ = cli(capsys, "snapshots", "show", f"{V}@{digest}", "--store", str(store))
    assert code == 0
    assert f"  digest {digest}" in out.splitlines()
    assert f"  pin it: {V}@{digest}" in out.splitlines()

    code, out, _ = cli(
        capsys, "snapshots", "verify", f"{V}@{digest}", "--store", str(store), "--json"
    )
    content = manifest_of(store / V)["content_hash"][:12]
    assert code == 0
    assert json.loads(out) == [
        {
            "version": V,
            "status": "ok",
            "content_hash": content,
            "digest": digest,
            "note": "",
            "error": "",
            "store": str(store),
        }
    ]
    wrong = "sha256:" + "0" * 64
    code, out, _ = cli(
        capsys, "snapshots", "verify", f"{V}@{wrong}", "--store", str(store), "--json"
    )
    assert code == 1
    assert (
        json.loads(out)[0]["error"]
        == f"snapshot {V}: expected digest {wrong}, found {digest} {NO_PIN}"
    )


def test_a_legacy_snapshot_loads_and_verifies_without_a_recorded_digest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Published before digest files: its digest is computed from its manifest, every file hash
    is still checked, and an old-format index (no digests) still reads."""
    legacy = tmp_path / "legacy"
    folder = writable_copy(bundled_snapshot_dir() / BUNDLED, legacy / BUNDLED)
    (folder / "digest").unlink(missing_ok=True)
    (legacy / "index.json").write_text(json.dumps({"format_version": 1, "versions": [BUNDLED]}))
    digest = manifest_digest(manifest_of(folder))
    row = {
        "version": BUNDLED,
        "status": "ok",
        "content_hash": manifest_of(folder)["content_hash"][:12],
        "digest": digest,
        "note": "legacy, no recorded digest",
        "error": "",
        "store": str(legacy),
    }
    code, out, _ = cli(capsys, "snapshots", "verify", "--store", str(legacy), "--json")
    assert (code, json.loads(out)) == (0, [row])
    bp = BenchPress.load(f"{BUNDLED}@{digest}", store=legacy)
    assert (bp.version, bp.snapshot.digest_note) == (BUNDLED, "legacy, no recorded digest")

    write_index(legacy)  # an index written now records the digest computed today ...
    assert json.loads((legacy / "index.json").read_text())["digests"] == {BUNDLED: digest}
    code, out, _ = cli(capsys, "snapshots", "verify", "--store", str(legacy), "--json")
    note = "legacy, no digest file; the store index records its digest"
    assert (code, json.loads(out)[0]["note"]) == (0, note)
    found = manifest_digest(edited(folder, "counts.models", 1))  # ... so a later edit shows
    with pytest.raises(SnapshotError, match=re.escape(f"has digest {found}, the store's index")):
        verify(folder, BUNDLED)

    with (folder / "cells.parquet").open("ab") as handle:  # and the files are still hashed
        handle.write(b"\0")
    with pytest.raises(SnapshotError, match=r"cells\.parquet has sha256"):
        verify(folder)


# --------------------------------------------------------------- 2: read once, parse safely
def test_a_file_swapped_during_loads_is_never_loaded(tmp_path: Path) -> None:
    """A thread rewrites cells.parquet in place, alternating other content and the genuine
    bytes, while loads run: each load returns the genuine data or raises SnapshotError (never
    the other content, never a parser panic)."""
    _, folder = stage(tiny_tables(71.5, padding=200_000), tmp_path / "genuine", {})
    _, other = stage(tiny_tables(99.0), tmp_path / "other", {})
    target = folder / "cells.parquet"
    genuine, swapped = target.read_bytes(), (other / "cells.parquet").read_bytes()
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            for data in (swapped, genuine):
                with target.open("r+b") as handle:  # in place: a reader may see it half written
                    handle.write(data)
                    handle.truncate()
                time.sleep(0.0005)

    outcomes: Counter[str] = Counter()
    wrong: list[str] = []
    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    try:
        for _ in range(300):
            try:
                scores = load_snapshot(folder).cells["score"].to_list()
            except SnapshotError:
                outcomes["refused"] += 1
            except BaseException as exc:  # pyo3's PanicException is no Exception
                if isinstance(exc, KeyboardInterrupt):
                    raise
                wrong.append(f"{type(exc).__name__}: {str(exc)[:80]}")
            else:
                outcomes["genuine" if scores == [71.5, 40.0] else "swapped"] += 1
                if scores != [71.5, 40.0]:
                    wrong.append(f"swapped data loaded: {scores}")
    finally:
        stop.set()
        swapper.join()
    assert wrong == []
    assert outcomes["genuine"] > 0 and outcomes["refused"] > 0, outcomes  # the race was on


def panicking_parquet() -> bytes:
    """A parquet file one byte off, on which polars' reader panics (pyo3 PanicException)."""
    frame = pl.DataFrame(
        {
            "model_id": ["m1", "m2", "m3"],
            "benchmark_id": ["b1", "b1", "b2"],
            "score": [71.5, 40.0, 3.0],
        }
    )
    buffer = io.BytesIO()
    frame.write_parquet(buffer, compression="zstd", compression_level=3, statistics=False)
    data = bytearray(buffer.getvalue())
    data[534] = 120
    return bytes(data)


def test_a_parser_panic_is_a_snapshot_error(tmp_path: Path) -> None:
    """A publisher's hostile file whose hash matches its manifest: the reader's panic becomes
    a SnapshotError naming the file (a BaseException would escape `except Exception`)."""
    hostile = panicking_parquet()
    try:
        pl.read_parquet(io.BytesIO(hostile))
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"precondition: expected a panic, polars raised {exc!r}; find a new byte")
    except BaseException as exc:  # noqa: BLE001
        assert type(exc).__name__ == "PanicException"
    else:
        pytest.fail("precondition: polars read the damaged file; find a new byte")
    _, folder = stage(tiny_tables(71.5), tmp_path / "staging", {})
    (folder / "cells.parquet").write_bytes(hostile)
    manifest = manifest_of(folder)
    files = {**manifest["files"], "cells.parquet": hashlib.sha256(hostile).hexdigest()}
    resign(folder, {**manifest, "files": files, "content_hash": content_hash(files)})
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(folder)
    assert str(caught.value).startswith(
        f"{folder}: cells.parquet cannot be parsed (PanicException: "
    )


# ------------------------------------------------- 3: symlinks, special and unlisted files
def test_a_data_file_symlinked_outside_the_store_is_refused_unread(
    tiny_store: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:root:/root:/bin/sh\n")
    cells = tiny_store / V / "cells.parquet"
    cells.unlink()
    cells.symlink_to(secret)
    with pytest.raises(SnapshotError) as caught:
        verify(tiny_store / V)
    assert str(caught.value) == (
        f"{tiny_store / V}: cells.parquet is a symbolic link; refused without reading it "
        "(snapshot files must be regular files inside their folder)"
    )  # no hash of what it points to


def test_a_data_file_symlinked_to_identical_content_is_refused(
    tiny_store: Path, tmp_path: Path
) -> None:
    cells = tiny_store / V / "cells.parquet"
    outside = Path(shutil.copyfile(cells, tmp_path / "cells-copy.parquet"))
    cells.unlink()
    cells.symlink_to(outside)
    message = re.escape(f"{tiny_store / V}: cells.parquet is a symbolic link; refused")
    for read in (
        lambda: verify(tiny_store / V),
        lambda: load_snapshot(tiny_store / V),
        lambda: open_store(tiny_store).fetch(V),
    ):
        with pytest.raises(SnapshotError, match=message):
            read()


def test_a_version_folder_symlinked_to_identical_content_is_refused(
    tiny_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = Path(shutil.move(tiny_store / V, tmp_path / "elsewhere"))
    (tiny_store / V).symlink_to(elsewhere, target_is_directory=True)
    expected = (
        f"{tiny_store / V}: the snapshot folder is a symbolic link; refused (a version folder "
        "must be a real directory inside its store)"
    )
    for read in (
        lambda: resolve_version(V, [tiny_store]),
        lambda: open_store(tiny_store).fetch(V),
        lambda: load_snapshot(tiny_store / V),
    ):
        with pytest.raises(SnapshotError) as caught:
            read()
        assert str(caught.value) == expected
    with pytest.warns(BrokenSnapshotWarning), pytest.raises(SnapshotError, match="all broken"):
        resolve_version("latest", [tiny_store])
    code, out, _ = cli(capsys, "snapshots", "list", "--store", str(tiny_store), "--json")
    assert [(r["status"], r["error"]) for r in json.loads(out)] == [("broken", expected)]
    assert load_snapshot(elsewhere).cells["score"].to_list() == [71.5, 40.0]  # itself fine


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are a POSIX feature")
def test_a_named_pipe_is_refused_without_blocking(tiny_store: Path) -> None:
    cells = tiny_store / V / "cells.parquet"
    cells.unlink()
    os.mkfifo(cells)
    outcome: list[BaseException] = []

    def check() -> None:
        try:
            verify(tiny_store / V)
        except BaseException as exc:  # noqa: BLE001 (handed to the test thread)
            outcome.append(exc)

    worker = threading.Thread(target=check, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "verify blocked on the named pipe"
    assert [str(exc) for exc in outcome] == [
        f"{tiny_store / V}: cells.parquet is a named pipe, not a regular file; refused without "
        "reading it"
    ]


@pytest.mark.parametrize("name", ["notes.txt", ".DS_Store", "extra"])
def test_unlisted_files_fail_verify(
    tiny_store: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    folder = tiny_store / V
    if name == "extra":
        (folder / name).mkdir()
    else:
        (folder / name).write_text("x")
    expected = (
        f"snapshot {V}: {folder} holds files its manifest does not list: [{name!r}] (a version "
        "folder holds only its listed files, manifest.json and digest)"
    )
    with pytest.raises(SnapshotError) as caught:
        verify(folder)
    assert str(caught.value) == expected
    code, out, _ = cli(capsys, "snapshots", "verify", "--store", str(tiny_store), "--json")
    assert (code, json.loads(out)[0]["error"]) == (1, expected)


# ------------------------------------------------------------------ 4: one spelling each
@pytest.mark.parametrize(
    ("spelled", "canonical"),
    [
        ("٢٠٢٦.11.30.2", "2026.11.30.2"),  # Arabic-Indic digits
        ("２０２６.11.30.2", "2026.11.30.2"),  # full-width digits
        ("2026.11.30.02", "2026.11.30.2"),
        ("2026.1.5.1", "2026.01.05.1"),
    ],
)
def test_a_version_has_one_ascii_spelling(spelled: str, canonical: str, tiny_store: Path) -> None:
    expected = f"not a snapshot version: {spelled!r} (the canonical spelling is {canonical})"
    for read in (
        lambda: check_version(spelled),
        lambda: BenchPress.load(spelled),
        lambda: open_store(tiny_store).fetch(spelled),
    ):
        with pytest.raises(SnapshotError) as caught:
            read()
        assert str(caught.value) == expected


def test_other_spellings_are_no_versions_in_a_store(tiny_store: Path) -> None:
    shutil.copytree(tiny_store / V, tiny_store / "2099.01.01.01")
    shutil.copytree(tiny_store / V, tiny_store / "٢٠٩٩.01.01.1")
    assert list_versions(tiny_store) == [V]
    (tiny_store / "index.json").write_text(json.dumps({"versions": [V, "2099.01.01.01"]}))
    with pytest.raises(SnapshotError, match=r"lists invalid versions \['2099\.01\.01\.01'\]"):
        open_store(tiny_store).read_manifest(V)
    assert next_version([], date(2026, 1, 5)) == "2026.01.05.1"  # what the writer spells


# --------------------------------------------------- the mutation gap: pinned messages
def test_verify_checks_the_content_hash_and_each_file_hash(
    tiny_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A forger who re-signs the digest file and the index leaves only these checks: each must
    fire with its own message (a verify that skipped the content hash check passed this)."""
    folder = tiny_store / V
    manifest = manifest_of(folder)
    computed = content_hash(manifest["files"])
    resign(folder, {**manifest, "content_hash": "0" * 64}, index=True)
    expected = (
        f"snapshot {V}: content_hash {'0' * 64} in manifest.json is not the hash over its file "
        f"hashes, {computed}"
    )
    with pytest.raises(SnapshotError) as caught:
        verify(folder, V)
    assert str(caught.value) == expected
    code, out, _ = cli(capsys, "snapshots", "verify", V, "--store", str(tiny_store), "--json")
    assert (code, json.loads(out)[0]["error"]) == (1, expected)

    files = {**manifest["files"], "cells.parquet": "f" * 64}
    resign(folder, {**manifest, "files": files, "content_hash": content_hash(files)}, index=True)
    actual = hashlib.sha256((folder / "cells.parquet").read_bytes()).hexdigest()
    with pytest.raises(SnapshotError) as caught:
        verify(folder, V)
    assert str(caught.value) == (
        f"snapshot {V}: cells.parquet has sha256 {actual[:12]}..., manifest says "
        "ffffffffffff... (modified after publishing?)"
    )


# ---------------------------------------------------------------------- remote (https) stores
@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch, benchpress_home: Path) -> None:
    monkeypatch.setattr(store_module, "BACKOFF_SECONDS", 0.01)


def test_an_http_store_checks_digests_and_pins_before_downloading_data(
    store: Path, benchpress_home: Path, fast_retries: None
) -> None:
    digest = recorded_digest(store / V)
    server = StaticStore(store)
    try:
        wrong = "sha256:" + "1" * 64
        with pytest.raises(SnapshotError) as caught:
            BenchPress.load(f"{V}@{wrong}", store=server.url)
        assert (
            str(caught.value) == f"snapshot {V}: expected digest {wrong}, found {digest} {NO_PIN}"
        )
        assert not any(path.endswith(".parquet") for path in server.paths)  # no data fetched

        bp = BenchPress.load(f"{V}@{digest}", store=server.url)
        cache = benchpress_home / "cache" / store_id(server.url)
        assert bp.snapshot.path == cache / V
        assert json.loads((cache / "index.json").read_text())["digests"] == {V: digest}

        forged = manifest_digest(edited(store / V, "counts.models", 1))
        fresh = open_store(server.url)  # a consumer that has not cached it
        fresh.cache_dir = benchpress_home / "other-cache"
        with pytest.raises(SnapshotError) as caught:
            fresh.fetch(V)
        assert str(caught.value) == (
            f"snapshot {V}: manifest.json has digest {forged}, its digest file records {digest} "
            "(manifest changed after publishing?)"
        )
        assert not (benchpress_home / "other-cache" / V).exists()  # nothing was cached
    finally:
        server.stop()
    offline = BenchPress.load(f"{V}@{digest}", store=server.url)  # cached: no network
    assert offline.manifest["counts"]["models"] == bp.manifest["counts"]["models"]


# ------------------------------------------------------------------- named (pretrained) ones
def test_a_pretrained_name_pins_its_manifest_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = PRETRAINED["microsoft/benchpress-v1"]
    assert entry.digest == manifest_digest(manifest_of(pretrained_root() / entry.directory))
    bp = BenchPress.from_pretrained(f"{entry.name}@{entry.digest}")
    assert (bp.version, bp.snapshot.digest) == (entry.name, entry.digest)

    copy = writable_copy(pretrained_root(), tmp_path / "pretrained")
    monkeypatch.setattr(pretrained_module, "pretrained_root", lambda: copy)
    found = manifest_digest(edited(copy / entry.directory, "counts.models", 1))
    with pytest.raises(SnapshotError) as caught:
        BenchPress.from_pretrained(entry.name)
    assert str(caught.value) == (
        f"pretrained snapshot {entry.name}: manifest digest {found} is not the pinned "
        f"{entry.digest} (its manifest was edited, or rebuilt: update the pin)"
    )
