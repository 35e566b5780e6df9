"""Refresh wall time, serial vs parallel, on the recorded sources.

Each run is a fresh home refreshed by the `benchpress refresh` command from the recorded
payloads of the eleven sources (356 files, 15 MB), served over HTTP by the loopback mirror the
tests use. `--latency` delays every answer by that many seconds, as a server across the
internet would (a round trip and the server's own time); 0 is loopback speed. For each latency
the refresh runs with `--workers 1` (serial, in one process) and with `--workers N`.

Printed per run: the whole refresh (command start to exit), the sources phase (first source
step started to last one ended, from the Dagster event log) and the speed-up against serial at
the same latency; and whether the parallel refresh's snapshot holds the same cells, models and
benchmarks as the serial one (fetch times aside: the mirror transport stamps them).

    python benchmarks/refresh_speed.py [--workers 4] [--latency 0,0.1] [--out F]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

import dagster as dg  # noqa: E402
import polars as pl  # noqa: E402

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT  # noqa: E402
from tests.support.mirror_server import MirrorServer  # noqa: E402

TIME_COLUMNS = ("fetched_at", "release_date", "date_source")  # stamped at fetch time


def benchpress_command() -> list[str]:
    script = Path(sys.executable).parent / "benchpress"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "predictor.cli"]


def sources_phase(home: Path) -> float:
    """Seconds from the first source step's start to the last one's end, over the runs of
    the refresh (one serial run, or the parallel ingest run and the matrix run)."""
    starts, ends = [], []
    with dg.DagsterInstance.from_config(str(home / "dagster")) as instance:
        for run in instance.get_runs():
            for stat in instance.get_run_step_stats(run.run_id):
                if stat.step_key.endswith(("_payloads", "_source_scores")):
                    starts.append(stat.start_time)
                    ends.append(stat.end_time)
    return max(ends) - min(starts)


def refresh(home: Path, mirror: str, workers: int) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHPRESS_")}
    env.update({"BENCHPRESS_HOME": str(home), "BENCHPRESS_HTTP_MIRROR": mirror})
    command = [*benchpress_command(), "refresh", "--mode", "mirror", "--no-progress"]
    started = time.perf_counter()
    done = subprocess.run(
        [*command, "--workers", str(workers)], env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"refresh with --workers {workers} failed:\n{done.stderr[-2000:]}")
    return seconds


def snapshot_tables(home: Path) -> dict[str, pl.DataFrame]:
    (folder,) = [p for p in (home / "snapshots").iterdir() if p.is_dir()]
    tables = {}
    for name in ("cells", "models", "benchmarks"):
        frame = pl.read_parquet(folder / f"{name}.parquet")
        tables[name] = frame.drop([c for c in TIME_COLUMNS if c in frame.columns])
    return tables


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4, help="workers of the parallel run")
    parser.add_argument(
        "--latency", default="0,0.1", help="comma-separated seconds added to every answer"
    )
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args(argv)
    latencies = [float(x) for x in args.latency.split(",") if x.strip()]
    print(f"recorded sources over a loopback mirror; {os.cpu_count()} CPU cores")
    print(f"{'latency':>8} {'workers':>7} {'refresh s':>10} {'sources s':>10} {'speed-up':>9}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="refresh-speed-") as scratch:
        for latency in latencies:
            server = MirrorServer(DEFAULT_REPLAY_ROOT).start()
            if latency > 0:
                server.delays["/"] = latency
            serial_home = None
            try:
                for workers in (1, args.workers):
                    home = Path(scratch) / f"latency-{latency:g}-workers-{workers}"
                    seconds = refresh(home, server.base_url, workers)
                    phase = sources_phase(home)
                    row = {"latency_s": latency, "workers": workers, "refresh_s": seconds}
                    row["sources_s"] = phase
                    if workers == 1:
                        serial_home, serial = home, row
                        row["speedup"] = 1.0
                    else:
                        row["speedup"] = serial["refresh_s"] / seconds
                        ours, theirs = snapshot_tables(home), snapshot_tables(serial_home)
                        row["same_snapshot"] = all(ours[k].equals(theirs[k]) for k in ours)
                    rows.append(row)
                    print(
                        f"{latency:>7g}s {workers:>7} {seconds:>10.1f} {phase:>10.1f} "
                        f"{row['speedup']:>8.2f}x"
                    )
            finally:
                server.stop()
    parallel = [r for r in rows if r["workers"] != 1]
    same = all(r["same_snapshot"] for r in parallel)
    print(f"parallel snapshots hold the same cells, models and benchmarks as serial: {same}")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=2) + "\n")
        print(f"wrote {args.out}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
