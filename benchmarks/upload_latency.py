"""Latency of `POST /api/results` for normal files, once the file-parsing processes are warm.

Serves the bundled snapshot on a free loopback port (in this process, as the tests do), waits
until its parsing processes have started (they import the readers once), then uploads, one
after another, `--repeats` times each: a small tidy CSV and a real lm-evaluation-harness
results file. It prints the median, the 90th percentile and the maximum of each, and whether
any parsing process was started or killed meanwhile (a warm worker reads every normal file).
The test suite checks the workers are reused; this script gives the figure (a few ms on a
2-core machine; the suite once held every upload under half a second with a clock).

    python benchmarks/upload_latency.py [--repeats 50] [--out latency.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from predictor.util.paths import bundled_snapshot_dir  # noqa: E402
from predictor.web.catalog import Catalog  # noqa: E402
from predictor.web.server import make_server  # noqa: E402

LM_EVAL = (
    REPO_ROOT
    / "tests"
    / "fixtures"
    / "eval_formats"
    / "lm_eval"
    / "results_2026-01-21T03-44-18.458309.json"
)
TIDY = b"model,benchmark,score\nacme-7b,GPQA Diamond,41.5\nacme-7b,hle,7\n"
WARM_SECONDS = 120.0


def upload(url: str, name: str, data: bytes) -> float:
    """Seconds for one upload, answered 200 (anything else stops the benchmark)."""
    request = urllib.request.Request(
        f"{url}api/results?name={name}", data, {"Content-Type": "application/octet-stream"}
    )
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=60) as answer:
        answer.read()
        if answer.status != 200:
            raise SystemExit(f"{name}: answered {answer.status}")
    return time.perf_counter() - started


def measure(home: Path, repeats: int) -> tuple[dict[str, list[float]], set[int], bool]:
    """Seconds of each upload by file name, the warm workers' pids, and whether the same
    workers read every file (none started or killed)."""
    server = make_server(catalog=Catalog(stores=[bundled_snapshot_dir()], home=home), quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        pool = server.app.state.endpoints.uploads.pool
        deadline = time.monotonic() + WARM_SECONDS
        while pool.idle < server.limits.upload_workers:
            if time.monotonic() > deadline:
                raise SystemExit(f"the parsing processes did not start in {WARM_SECONDS:g} s")
            time.sleep(0.05)
        workers, killed = set(pool.pids), pool.killed
        files = {"tidy.csv": TIDY, LM_EVAL.name: LM_EVAL.read_bytes()}
        upload(server.url, "tidy.csv", TIDY)  # the server's first answer, unmeasured
        seconds = {
            name: [upload(server.url, name, data) for _ in range(repeats)]
            for name, data in files.items()
        }
        return seconds, workers, set(pool.pids) == workers and pool.killed == killed
    finally:
        server.shutdown()
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="benchpress-upload-latency-") as home:
        seconds, workers, reused = measure(Path(home), args.repeats)
    summary = {
        name: {
            "median_ms": float(np.median(times) * 1000),
            "p90_ms": float(np.percentile(times, 90) * 1000),
            "max_ms": float(np.max(times) * 1000),
        }
        for name, times in seconds.items()
    }
    print(f"{args.repeats} uploads of each file, one after another, {len(workers)} warm workers")
    for name, figures in summary.items():
        print(
            f"  {name:<44} median {figures['median_ms']:.1f} ms   "
            f"p90 {figures['p90_ms']:.1f} ms   max {figures['max_ms']:.1f} ms"
        )
    print(f"workers reused throughout: {'yes' if reused else 'no'}")
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": summary, "reused": reused}, indent=2))
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
