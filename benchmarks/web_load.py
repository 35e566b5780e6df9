"""The web page's server under load and against slow clients.

Starts `python -m benchpress.app` on a free loopback port with the bundled snapshot (its own
process, as a person runs it), then, from this process:

1. `--clients` concurrent clients (50) for `--seconds` (30): each sends GET /api/predict with
   its own probe scores (seeded), waits for the whole answer, and sends the next at once, on a
   new connection each time (the worst case for the listen backlog);
2. the same with a /api/matrix mix: a tenth of the clients ask for the matrix instead;
3. `--slow` connections (600, more than the server's cap of 512) that each send a request
   line, then one header line every 20 s, while one client predicts every half second;
4. `--hostile` clients (20) uploading hostile results files to `POST /api/results` in a loop
   (a 470-byte lm-eval file whose `group_subtasks` list the next group ten times, ten levels
   deep, and a 5 MB one of 200,000 tasks: each seconds of a core to read), while
   `--hostile-predict` clients (10) predict.

For 1 and 2 it prints p50/p95/p99/max latency and errors (any status but 200, a reset or
refused connection, a timeout); for 3 how the slow connections were cut (408 at the header
deadline, 503 when a newer connection took their place) and after how long, the latency of
the normal requests meanwhile, and the server's thread count (from /proc) at rest and at its
peak; for 4 the /api/predict latencies, the uploads' answers by status, and the resident
memory of the server with its file-parsing processes at its peak. It exits 1 if /api/predict
answered with an error in 1 or 4.

    python benchmarks/web_load.py [--clients 50] [--seconds 30] [--slow 600] [--hostile 20]
        [--phases predict,mix,slowloris,hostile] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from predictor.util.paths import bundled_snapshot_dir  # noqa: E402

SEED = 17
PROBES = ("gpqa_diamond", "mmlu_pro", "hle", "ifeval", "livecodebench")
REQUEST_TIMEOUT = 120.0
SLOW_LINE_SECONDS = 20.0


@dataclass
class Tally:
    """Latencies of the answered requests and the errors, by kind."""

    seconds: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1

    def summary(self) -> dict[str, object]:
        ordered = sorted(self.seconds)

        def pct(q: float) -> float:
            return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0

        return {
            "requests": len(ordered) + sum(self.errors.values()),
            "ok": len(ordered),
            "p50_ms": round(pct(0.50) * 1000, 1),
            "p95_ms": round(pct(0.95) * 1000, 1),
            "p99_ms": round(pct(0.99) * 1000, 1),
            "max_ms": round((ordered[-1] if ordered else 0.0) * 1000, 1),
            "errors": dict(self.errors),
        }


class Server:
    """`python -m benchpress.app --port 0` on the bundled snapshot, in its own process."""

    def __init__(self) -> None:
        self.home = tempfile.mkdtemp(prefix="benchpress-web-load-")
        command = [sys.executable, "-m", "benchpress.app", "--port", "0", "--quiet"]
        self.proc = subprocess.Popen(
            [*command, "--store", str(bundled_snapshot_dir())],
            cwd=REPO_ROOT,
            env={**os.environ, "BENCHPRESS_HOME": self.home},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if "serving on " in line:
                url = urlsplit(line.split("serving on ", 1)[1].split()[0])
                self.host, self.port = str(url.hostname), int(url.port or 80)
                return
        raise SystemExit(f"the app did not start (exit {self.proc.wait()})")

    def cpu_seconds(self) -> float:
        """User and system CPU time the server process has used so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def threads(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("Threads:"):
                return int(line.split()[1])
        return -1

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def fetch(server: Server, path: str) -> tuple[int, bytes]:
    """One GET on a new connection: the status and the body."""
    reader, writer = await asyncio.open_connection(server.host, server.port)
    try:
        request = f"GET {path} HTTP/1.1\r\nHost: {server.host}:{server.port}\r\n"
        writer.write((request + "Connection: close\r\n\r\n").encode())
        data = await reader.read()
    finally:
        writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


async def timed(server: Server, path: str, tally: Tally) -> None:
    started = time.perf_counter()
    try:
        status, _ = await asyncio.wait_for(fetch(server, path), REQUEST_TIMEOUT)
    except TimeoutError:
        tally.error("timeout")
    except ConnectionResetError:
        tally.error("connection reset")
    except ConnectionRefusedError:
        tally.error("connection refused")
    except (OSError, ValueError, IndexError) as exc:
        tally.error(type(exc).__name__)
    else:
        if status == 200:
            tally.seconds.append(time.perf_counter() - started)
        else:
            tally.error(f"status {status}")


def predict_path(rng: random.Random) -> str:
    scores = ",".join(f"{b}={rng.uniform(20, 90):.1f}" for b in rng.sample(PROBES, 3))
    return "/api/predict?" + urlencode({"scores": scores})


async def load(server: Server, clients: int, seconds: float, matrix_share: float) -> dict:
    """`clients` closed-loop clients for `seconds`; every 1/matrix_share-th asks for the matrix."""
    tallies = {"predict": Tally(), "matrix": Tally()}
    matrix_clients = round(clients * matrix_share)
    stop = time.perf_counter() + seconds

    async def client(i: int) -> None:
        rng = random.Random(SEED * 1000 + i)
        asks_matrix = i < matrix_clients
        while time.perf_counter() < stop:
            if asks_matrix:
                await timed(server, "/api/matrix", tallies["matrix"])
            else:
                await timed(server, predict_path(rng), tallies["predict"])

    cpu, own = server.cpu_seconds(), time.process_time()
    await asyncio.gather(*(client(i) for i in range(clients)))
    cpu, own = server.cpu_seconds() - cpu, time.process_time() - own
    figures: dict = {name: t.summary() for name, t in tallies.items() if t.seconds or t.errors}
    answered = sum(t.summary()["requests"] for t in tallies.values())  # type: ignore[misc]
    figures["cpu"] = {
        "server_cpu_s": round(cpu, 1),
        "server_cpu_ms_per_request": round(1000 * cpu / max(answered, 1), 2),
        "client_cpu_s": round(own, 1),
        "requests_per_s": round(answered / seconds, 1),
    }
    return figures


def how_cut(answer: bytes) -> str:
    """The server's answer to a slow connection, by kind."""
    if not answer:
        return "closed without an answer"
    status = answer.split(b" ", 2)[1].decode()
    if status == "408":
        return "408 at the header deadline"
    if status == "503" and b"had not sent a whole request" in answer:
        return "503, closed for a newer connection"
    if status == "503":
        return "503, over the connection cap"
    return f"status {status}"


async def slowloris(server: Server, count: int) -> dict:
    """`count` connections sending a header line every 20 s; a normal client meanwhile."""
    cut: dict[str, list[float]] = {}
    rest = server.threads()
    peak = [rest]
    normal = Tally()
    done = asyncio.Event()

    async def slow(i: int) -> None:
        started = time.perf_counter()
        try:
            reader, writer = await asyncio.open_connection(server.host, server.port)
        except OSError as exc:
            cut.setdefault(f"not connected ({type(exc).__name__})", []).append(0.0)
            return
        try:
            writer.write(f"GET /api/versions HTTP/1.1\r\nHost: {server.host}\r\n".encode())
            answer = b""
            for line in range(1000):
                try:
                    answer = await asyncio.wait_for(reader.read(), SLOW_LINE_SECONDS)
                    break
                except TimeoutError:
                    writer.write(f"X-Slow-{line}: x\r\n".encode())
            cut.setdefault(how_cut(answer), []).append(time.perf_counter() - started)
        except ConnectionResetError:
            cut.setdefault("reset", []).append(time.perf_counter() - started)
        finally:
            writer.close()

    async def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], server.threads())
            await asyncio.sleep(0.1)

    async def steady() -> None:
        rng = random.Random(SEED)
        while not done.is_set():
            await timed(server, predict_path(rng), normal)
            await asyncio.sleep(0.5)

    watcher, prober = asyncio.create_task(watch()), asyncio.create_task(steady())
    started = time.perf_counter()
    await asyncio.gather(*(slow(i) for i in range(count)))
    done.set()
    await asyncio.gather(watcher, prober)
    return {
        "slow_connections": count,
        "seconds": round(time.perf_counter() - started, 1),
        "cut": {
            kind: {
                "count": len(after),
                "after_s_min": round(min(after), 2),
                "after_s_max": round(max(after), 2),
            }
            for kind, after in sorted(cut.items())
        },
        "normal_predicts": normal.summary(),
        "server_threads_at_rest": rest,
        "server_threads_peak": peak[0],
    }


def hostile_files() -> list[tuple[str, bytes]]:
    """Files that cost a core for seconds each to read (see the module's docstring)."""
    groups = {f"g{i}": [f"g{i + 1}"] * 10 for i in range(9)}
    nested = {"results": {"g0": {"acc,none": 0.5}}, "group_subtasks": groups, "model_name": "x"}
    many = {f"task_{i}": {"acc,none": 0.5} for i in range(200_000)}
    wide = {"results": many, "versions": {}, "model_name": "x"}
    return [
        (f"results_{kind}.json", json.dumps(doc, separators=(",", ":")).encode())
        for kind, doc in (("nested", nested), ("wide", wide))
    ]


async def post_file(server: Server, name: str, data: bytes) -> int:
    """One upload on a new connection: the status."""
    reader, writer = await asyncio.open_connection(server.host, server.port)
    try:
        head = (
            f"POST /api/results?name={name} HTTP/1.1\r\nHost: {server.host}:{server.port}\r\n"
            f"Content-Type: application/octet-stream\r\nContent-Length: {len(data)}\r\n"
            "Connection: close\r\n\r\n"
        )
        writer.write(head.encode() + data)
        answer = await reader.read()
    finally:
        writer.close()
    return int(answer.split(b" ", 2)[1]) if answer else 0


def resident_bytes(pid: int) -> int:
    """RSS of `pid` and its child processes (the file-parsing processes)."""
    total = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            if int(proc.name) == pid or int(stat[1]) == pid:
                total += int(stat[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    return total


async def hostile(server: Server, uploaders: int, predictors: int, seconds: float) -> dict:
    """`uploaders` clients posting hostile files while `predictors` clients predict."""
    files = hostile_files()
    statuses: dict[str, int] = {}
    normal = Tally()
    rest = resident_bytes(server.proc.pid)
    peak = [rest]
    stop = time.perf_counter() + seconds

    async def uploader(i: int) -> None:
        n = i
        while time.perf_counter() < stop:
            name, data = files[n % len(files)]
            n += 1
            try:
                status = await asyncio.wait_for(post_file(server, name, data), REQUEST_TIMEOUT)
                key = f"{name.split('_')[1].split('.')[0]} {status}"
            except (OSError, TimeoutError) as exc:
                key = type(exc).__name__
            statuses[key] = statuses.get(key, 0) + 1
            if key.endswith(" 503"):
                await asyncio.sleep(1.0)  # as told by Retry-After, roughly

    async def predictor(i: int) -> None:
        rng = random.Random(SEED * 7 + i)
        while time.perf_counter() < stop:
            await timed(server, predict_path(rng), normal)

    async def watch() -> None:
        while time.perf_counter() < stop:
            peak[0] = max(peak[0], resident_bytes(server.proc.pid))
            await asyncio.sleep(0.2)

    cpu = server.cpu_seconds()
    await asyncio.gather(
        watch(),
        *(uploader(i) for i in range(uploaders)),
        *(predictor(i) for i in range(predictors)),
    )
    return {
        "predict": normal.summary(),
        "uploads": dict(sorted(statuses.items())),
        "server_cpu_s": round(server.cpu_seconds() - cpu, 1),
        "rss_mib_at_start": round(rest / 2**20),
        "rss_mib_peak": round(peak[0] / 2**20),
    }


def show(title: str, figures: dict) -> None:
    print(f"\n{title}")
    for name, row in figures.items():
        print(f"  {name:8} {json.dumps(row)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--slow", type=int, default=600, help="slow connections (phase 3)")
    parser.add_argument("--hostile", type=int, default=20, help="hostile uploaders (phase 4)")
    parser.add_argument("--hostile-predict", type=int, default=10, help="predicting meanwhile")
    parser.add_argument("--phases", default="predict,mix,slowloris,hostile")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args(argv)

    server = Server()
    try:
        for path in ("/api/versions", "/api/matrix", predict_path(random.Random(SEED))):
            asyncio.run(fetch(server, path))  # load the snapshot, warm the caches
        average = Path("/proc/loadavg").read_text().split()[0]
        print(f"server {server.host}:{server.port}, {os.cpu_count()} cpus, load average {average}")
        phases = set(args.phases.split(","))
        figures: dict = {}
        if "predict" in phases:
            figures["predict"] = asyncio.run(load(server, args.clients, args.seconds, 0.0))
        if "mix" in phases:
            figures["mix"] = asyncio.run(load(server, args.clients, args.seconds, 0.1))
        if "slowloris" in phases:
            figures["slowloris"] = asyncio.run(slowloris(server, args.slow))
        if "hostile" in phases:
            time.sleep(10)  # the file-parsing processes start (they import the readers)
            figures["hostile"] = asyncio.run(
                hostile(server, args.hostile, args.hostile_predict, args.seconds)
            )
    finally:
        server.stop()
    errors = 0  # on /api/predict, in phases 1 and 4
    if "predict" in figures:
        show(f"{args.clients} clients, {args.seconds:g} s, /api/predict only", figures["predict"])
        errors += sum(figures["predict"]["predict"]["errors"].values())
    if "mix" in figures:
        show(f"{args.clients} clients, {args.seconds:g} s, a tenth on /api/matrix", figures["mix"])
    if "slowloris" in figures:
        print(f"\n{args.slow} slow connections (a header line every {SLOW_LINE_SECONDS:g} s)")
        for key, value in figures["slowloris"].items():
            print(f"  {key}: {json.dumps(value)}")
    if "hostile" in figures:
        print(
            f"\n{args.hostile} clients uploading hostile files, {args.hostile_predict} predicting,"
            f" {args.seconds:g} s"
        )
        for key, value in figures["hostile"].items():
            print(f"  {key}: {json.dumps(value)}")
        errors += sum(figures["hostile"]["predict"]["errors"].values())
    print(f"\nload average at the end: {Path('/proc/loadavg').read_text().split()[0]}")
    if errors:
        print(f"\n{errors} errors on /api/predict (see above)")
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=2) + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
