"""Comparing a rebuilt snapshot with a shipped one.

The data files (cells, models, benchmarks, aliases, conflicts) must match byte for byte. The
fitted numbers (fit.json, residuals.parquet, the manifest's quality figures) are the same
computation on the same input, but OpenBLAS picks its kernels by CPU (DYNAMIC_ARCH: Haswell, Zen,
SkylakeX, ...), and a kernel with another FMA order changes the last bits of a float: on one
machine a rebuild is byte for byte the same, across machines it agrees to ~1e-12. So where bytes
differ, those files are compared value by value at a relative tolerance of 1e-9 (a real change
to data, identity tables or the fit moves them by far more)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import polars as pl

FITTED = ("fit.json", "residuals.parquet")
RTOL = 1e-9


def _close(a: Any, b: Any, where: str) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), f"{where}: keys differ"
        for key in a:
            _close(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), f"{where}: lengths differ ({len(a)} vs {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, f"{where}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, int | float) and isinstance(b, int | float), f"{where}: {a!r} {b!r}"
        assert math.isclose(a, b, rel_tol=RTOL, abs_tol=RTOL), f"{where}: {a!r} vs {b!r}"
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


def _same_frame(a: pl.DataFrame, b: pl.DataFrame, name: str) -> None:
    assert a.schema == b.schema, f"{name}: schema differs"
    assert a.height == b.height, f"{name}: {a.height} rows vs {b.height}"
    for column in a.columns:
        left, right = a[column], b[column]
        if left.dtype.is_float():
            diff = ((left - right).abs() <= RTOL * (1.0 + right.abs())) | (
                left.is_null() & right.is_null()
            )
            assert diff.all(), f"{name}: column {column} differs beyond {RTOL:g}"
        else:
            assert left.equals(right), f"{name}: column {column} differs"


def assert_same_content(rebuilt: dict, shipped: dict, rebuilt_dir: Path, shipped_dir: Path):
    """`rebuilt` and `shipped` are the two manifests; raises naming the file that differs."""
    assert sorted(rebuilt["files"]) == sorted(shipped["files"])
    for name, digest in shipped["files"].items():
        if rebuilt["files"][name] == digest:
            continue
        assert name in FITTED, (
            f"{name} differs from the shipped snapshot: rebuild it (`make bundle`) after "
            "changing sources, identity tables or the fit"
        )
        if name.endswith(".json"):
            _close(
                json.loads((rebuilt_dir / name).read_text()),
                json.loads((shipped_dir / name).read_text()),
                name,
            )
        else:
            _same_frame(
                pl.read_parquet(rebuilt_dir / name), pl.read_parquet(shipped_dir / name), name
            )
    _close(rebuilt.get("quality"), shipped.get("quality"), "manifest quality")


# ------------------------------------------------------- editing published snapshots in tests
def writable_copy(source: Path, target: Path) -> Path:
    """A copy of a snapshot folder or store that tests may edit (published files are 0o444)."""
    shutil.copytree(source, target, symlinks=True)
    for path in [target, *target.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def write_manifest_text(folder: Path, manifest: dict[str, Any]) -> None:
    """`manifest.json` rewritten as the writer lays it out, its digest file left alone."""
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    (folder / "manifest.json").write_text(text, "utf-8")


def resign(folder: Path, manifest: dict[str, Any], index: bool = False) -> str:
    """Rewrite a version's manifest and its digest file consistently, as a forger would (and
    the store's index too with `index`); returns the new digest."""
    from predictor.snapshots.reader import manifest_digest

    write_manifest_text(folder, manifest)
    digest = manifest_digest(manifest)
    (folder / "digest").write_text(digest + "\n", "ascii")
    if index:
        path = folder.parent / "index.json"
        body = json.loads(path.read_text())
        body["digests"][folder.name] = digest
        path.write_text(json.dumps(body, indent=2) + "\n")
    return digest


class StaticStore:
    """A store directory served read-only over HTTP on loopback (standing in for an https
    host); records the request paths."""

    def __init__(self, root: Path) -> None:
        import threading
        from functools import partial
        from http.server import SimpleHTTPRequestHandler

        from tests.support.quiet_server import QuietThreadingHTTPServer

        self.paths: list[str] = []
        paths = self.paths

        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                paths.append(self.path)
                super().do_GET()

        self.httpd = QuietThreadingHTTPServer(
            ("127.0.0.1", 0), partial(Handler, directory=str(root))
        )
        self.httpd.daemon_threads = True
        host, port = self.httpd.server_address[:2]
        self.url = f"http://{host}:{port}/"
        threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
