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
import platform
import resource
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


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux), else what `platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def machine() -> dict[str, object]:
    """What the figures depend on: the CPU, its cores and how busy the machine is now."""
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "load_average_1_5_15": load_average()}


def children_cpu() -> float:
    """CPU seconds (user + system) of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


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


def run_refresh(home: Path, extra_env: dict[str, str], args: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `benchpress refresh` command in `home`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHPRESS_")}
    env.update({"BENCHPRESS_HOME": str(home), **extra_env})
    command = [*benchpress_command(), "refresh", "--no-progress", *args]
    cpu_before, started = children_cpu(), time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds, cpu = time.perf_counter() - started, children_cpu() - cpu_before
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[1:])} failed:\n{done.stderr[-2000:]}")
    return seconds, cpu


def refresh(home: Path, mirror: str, workers: int) -> float:
    mirrored = {"BENCHPRESS_HTTP_MIRROR": mirror}
    return run_refresh(home, mirrored, ["--mode", "mirror", "--workers", str(workers)])[0]


def replay_figures(home: Path) -> list[dict[str, object]]:
    """A fresh replay refresh (what `make demo` runs), then an unchanged rerun in that home."""
    rows = []
    for run in ("fresh", "unchanged rerun"):
        seconds, cpu = run_refresh(home, {}, ["--mode", "replay"])
        rows.append({"run": run, "refresh_s": seconds, "cpu_s": cpu})
        print(f"replay refresh, {run}: {seconds:.1f} s wall, {cpu:.1f} s CPU")
    return rows


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
    parser.add_argument(
        "--replay", action="store_true", help="also time a fresh replay refresh and a rerun"
    )
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args(argv)
    latencies = [float(x) for x in args.latency.split(",") if x.strip()]
    host = machine()
    print(
        f"machine: {host['cpu']}, {host['cores']} cores; "
        f"load average before (1, 5, 15 min): {host['load_average_1_5_15']}"
    )
    rows: list[dict[str, object]] = []
    replay: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="refresh-speed-") as scratch:
        if args.replay:
            replay = replay_figures(Path(scratch) / "replay")
        if latencies:
            print("recorded sources over a loopback mirror")
            print(
                f"{'latency':>8} {'workers':>7} {'refresh s':>10} {'sources s':>10} {'speed-up':>9}"
            )
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
    if parallel:
        print(f"parallel snapshots hold the same cells, models and benchmarks as serial: {same}")
    host["load_average_after"] = load_average()
    print(f"load average after (1, 5, 15 min): {host['load_average_after']}")
    if args.out:
        figures = {"machine": host, "replay": replay, "mirror": rows}
        Path(args.out).write_text(json.dumps(figures, indent=2) + "\n")
        print(f"wrote {args.out}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
