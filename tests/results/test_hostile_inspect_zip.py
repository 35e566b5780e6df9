"""Hostile Inspect `.eval` logs: members that expand far past their compressed size.

A `.eval` log is a zip; Inspect's reader expands every member it reads whole. The logs here
are built byte by byte (so a member's compressed data and the sizes the zip directory declares
are chosen freely): a valid header padded with spaces compresses 100 MiB into a few KB. The
reader must refuse such a member before expanding it, whatever size the directory declares,
in well under the time and memory the expansion would take."""

from __future__ import annotations

import json
import struct
import time
import tracemalloc
import zlib
from pathlib import Path

import pytest
import zstandard

from predictor.results import ResultsError, inspect_log, read_result_bytes, read_results
from tests.support.cli_runs import bundled_cli

REPO = Path(__file__).resolve().parents[2]
LOG = REPO / "tests/fixtures/eval_formats/inspect/data_arc_qwen.json"
STORED, DEFLATE, ZSTD = 0, 8, 93
MIB = 2**20
PAD_MIB = 100  # past the per-member cap, cheap to build (zstd: 0.1 s, deflate: one block)
# the refusal ends (on a loaded machine: the deflate bomb alone reads 64 MiB); that it never
# holds the expanded member is the memory peak's to show, not a clock's
SECONDS = 30.0
PEAK_BYTES = 32 * MIB  # and without holding the expanded member


def header() -> bytes:
    doc = json.loads(LOG.read_bytes())
    doc.pop("samples", None)
    return json.dumps(doc).encode()


def padded(prefix: bytes, mib: int, method: int) -> tuple[bytes, int, int]:
    """(compressed data, CRC-32, real size) of `prefix` followed by `mib` MiB of spaces."""
    chunk = b" " * MIB
    crc = zlib.crc32(prefix)
    for _ in range(mib):
        crc = zlib.crc32(chunk, crc)
    if method == ZSTD:
        compressor = zstandard.ZstdCompressor(level=3).compressobj()
        parts = [compressor.compress(prefix)]
        parts += [compressor.compress(chunk) for _ in range(mib)]
        data = b"".join(parts) + compressor.flush()
    else:  # raw deflate: a full flush makes the 1 MiB block repeatable as is
        first = zlib.compressobj(9, zlib.DEFLATED, -15)
        head = first.compress(prefix) + first.flush(zlib.Z_FULL_FLUSH)
        block = zlib.compressobj(9, zlib.DEFLATED, -15)
        spaces = block.compress(chunk) + block.flush(zlib.Z_FULL_FLUSH)
        data = head + spaces * mib + zlib.compressobj(9, zlib.DEFLATED, -15).flush()
    return data, crc, len(prefix) + mib * MIB


def member(name: str, content: bytes, method: int = ZSTD) -> tuple:
    if method == ZSTD:
        data = zstandard.ZstdCompressor().compress(content)
    elif method == DEFLATE:
        compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
        data = compressor.compress(content) + compressor.flush()
    else:
        data = content
    return name, method, data, zlib.crc32(content), len(content)


def zip_bytes(members: list[tuple]) -> bytes:
    """A zip of (name, method, compressed data, CRC-32, declared uncompressed size)."""
    local, central = bytearray(), bytearray()
    for name, method, data, crc, size in members:
        encoded = name.encode()
        offset = len(local)
        local += struct.pack(
            "<IHHHHHIIIHH",
            0x04034B50,
            63,
            0,
            method,
            0,
            0x21,
            crc,
            len(data),
            size,
            len(encoded),
            0,
        )
        local += encoded + data
        central += struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50,
            63,
            63,
            0,
            method,
            0,
            0x21,
            crc,
            len(data),
            size,
            len(encoded),
            0,
            0,
            0,
            0,
            0,
            offset,
        )
        central += encoded
    end = struct.pack(
        "<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), len(local), 0
    )
    return bytes(local + central + end)


def refused(path: Path) -> tuple[str, float, int]:
    """(message, seconds, peak traced bytes) of reading `path`, which must be refused with the
    same message as a file named on the command line and as an upload (whose bytes are
    measured: reading a file reserves room for the largest file allowed)."""
    with pytest.raises(ResultsError) as named:
        read_results([path])
    data = path.read_bytes()
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(ResultsError) as uploaded:
            read_result_bytes(str(path), data)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(uploaded.value) == str(named.value)
    return str(named.value), seconds, peak


@pytest.fixture(scope="module", autouse=True)
def _inspect_loaded() -> None:
    """Inspect's first import takes seconds: paid once here, not in a test's time."""
    pytest.importorskip("inspect_ai.log")


def test_the_caps_are_the_documented_ones() -> None:
    caps = (
        getattr(inspect_log, "MAX_MEMBER_BYTES", None),
        getattr(inspect_log, "MAX_READ_BYTES", None),
    )
    assert caps == (64 * MIB, 256 * MIB)


@pytest.mark.parametrize("method", [ZSTD, DEFLATE], ids=["zstd", "deflate"])
@pytest.mark.parametrize("declared", ["true", "lying"])
def test_a_header_bomb_is_refused_before_it_expands(tmp_path, method, declared) -> None:
    data, crc, size = padded(header(), PAD_MIB, method)
    size = size if declared == "true" else 2048  # the directory says 2 KB
    path = tmp_path / "bomb.eval"
    path.write_bytes(zip_bytes([("header.json", method, data, crc, size)]))
    assert path.stat().st_size < 400_000
    message, seconds, peak = refused(path)
    assert message == (
        f"{path}, header.json: the member expands past 64 MiB when decompressed (an Inspect "
        "log's header is small: this is not a log as Inspect wrote it)"
    )
    assert seconds < SECONDS and peak < PEAK_BYTES


def test_members_that_together_expand_too_far_are_refused(tmp_path) -> None:
    """A log without header.json is read from its journal: the start and every config update,
    each under the member cap, together past the total cap."""
    start = member("_journal/start.json", b"{}")
    data, crc, size = padded(b"{}", 60, ZSTD)
    updates = [(f"_journal/config_updates/{i}.json", ZSTD, data, crc, size) for i in range(1, 6)]
    path = tmp_path / "journal.eval"
    path.write_bytes(zip_bytes([start, *updates]))
    message, seconds, peak = refused(path)
    assert message == (
        f"{path}, _journal/config_updates/5.json: the members Inspect reads expand past "
        "256 MiB in all when decompressed (an Inspect log's header is small: this is not a "
        "log as Inspect wrote it)"
    )
    assert seconds < SECONDS and peak < PEAK_BYTES


def test_samples_are_not_expanded(tmp_path) -> None:
    """Only the header is read: a sample bomb is not the reader's business (nor read)."""
    data, crc, size = padded(b"{}", PAD_MIB, ZSTD)
    path = tmp_path / "samples.eval"
    path.write_bytes(
        zip_bytes([member("header.json", b"[]"), ("samples/1_epoch_1.json", ZSTD, data, crc, 9)])
    )
    message, seconds, _ = refused(path)
    assert message.startswith(f"{path}, EvalLog: not a valid Inspect log: ")
    assert seconds < SECONDS


@pytest.mark.parametrize("method", [STORED, DEFLATE, ZSTD], ids=["stored", "deflate", "zstd"])
def test_a_valid_log_built_by_hand_is_read_like_its_json_form(tmp_path, method) -> None:
    path = tmp_path / "log.eval"
    path.write_bytes(zip_bytes([member("header.json", header(), method)]))
    assert (
        read_results([path])
        .drop("file", "file_sha256")
        .equals(read_results([LOG]).drop("file", "file_sha256"))
    )


def test_a_damaged_zip_is_refused_as_unreadable(tmp_path) -> None:
    path = tmp_path / "cut.eval"
    path.write_bytes(zip_bytes([member("header.json", header())])[:-30])
    message, _, _ = refused(path)
    assert message.startswith(f"{path}: Inspect cannot read this log: ")


def test_the_cli_prints_the_bomb_refusal_as_one_line(capsys, benchpress_home, tmp_path) -> None:
    """(its time is the command's start-up: the refusal's own is measured above)"""
    data, crc, _ = padded(header(), PAD_MIB, ZSTD)
    path = tmp_path / "bomb.eval"
    path.write_bytes(zip_bytes([("header.json", ZSTD, data, crc, 2048)]))
    code, out, err = bundled_cli(capsys, "predict", "--from", str(path))
    assert (code, out) == (2, "")
    assert err == (
        f"benchpress: error: {path}, header.json: the member expands past 64 MiB when "
        "decompressed (an Inspect log's header is small: this is not a log as Inspect wrote "
        "it)\n"
    )
