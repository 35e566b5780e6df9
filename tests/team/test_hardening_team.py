"""Team set-up hardening: `make team-demo` stops its servers on SIGTERM/SIGHUP as on Ctrl-C,
and the DuckLake settings refuse credentials written into their URLs without echoing them."""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from predictor.cli.main import main
from warehouse import ducklake

REPO_ROOT = Path(__file__).resolve().parents[2]
SECRET = "PW-s3cr3t-Zq9"
KEY = "AKIAEXAMPLEKEY77"


# ------------------------------------------------------- 4: no credentials in the URLs
def _lake_env(**extra: str) -> dict[str, str]:
    return {
        "BENCHPRESS_DUCKLAKE_CATALOG": "postgresql://bp@127.0.0.1:5432/lake",
        "BENCHPRESS_DUCKLAKE_DATA": "s3://bucket/warehouse",
        "AWS_ACCESS_KEY_ID": "test-key-id",
        "AWS_SECRET_ACCESS_KEY": "test-secret-key",
        **extra,
    }


CREDENTIAL_URLS = [
    ("BENCHPRESS_DUCKLAKE_DATA", f"s3://{KEY}:{SECRET}@bucket/warehouse"),
    ("BENCHPRESS_DUCKLAKE_DATA", f"s3://{SECRET}@bucket"),
    ("BENCHPRESS_DUCKLAKE_DATA", f"https://u:{SECRET}@host/x"),
    ("BENCHPRESS_DUCKLAKE_DATA", f"{KEY}:{SECRET}@bucket/x"),
    ("AWS_ENDPOINT_URL", f"https://u:{SECRET}@host/x"),
    ("AWS_ENDPOINT_URL", f"http://{KEY}:{SECRET}@127.0.0.1:9000"),
    ("AWS_ENDPOINT_URL_S3", f"http://{SECRET}@127.0.0.1:9000"),
]


@pytest.mark.parametrize(("name", "value"), CREDENTIAL_URLS)
def test_credentials_in_a_lake_url_are_refused_unechoed(name: str, value: str) -> None:
    with pytest.raises(ValueError) as refused:
        ducklake.lake_settings(_lake_env(**{name: value}))
    message = str(refused.value)
    assert SECRET not in message and KEY not in message
    assert "credentials in the URL are refused" in message and name in message


@pytest.mark.parametrize(("name", "value"), CREDENTIAL_URLS)
def test_refresh_refuses_them_with_exit_2(
    name: str,
    value: str,
    benchpress_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for variable, setting in _lake_env(BENCHPRESS_WAREHOUSE="ducklake", **{name: value}).items():
        monkeypatch.setenv(variable, setting)
    assert main(["refresh", "--mode", "replay", "--no-progress"]) == 2
    out, err = capsys.readouterr()
    assert "credentials in the URL are refused" in err
    assert SECRET not in out + err and KEY not in out + err
    assert not benchpress_home.exists()


def test_a_plain_data_path_and_endpoint_still_work() -> None:
    settings = ducklake.lake_settings(
        _lake_env(AWS_ENDPOINT_URL="http://127.0.0.1:9000", BENCHPRESS_DUCKLAKE_DATA="s3://b/p")
    )
    assert (settings.data_path, settings.s3.endpoint) == ("s3://b/p/", "http://127.0.0.1:9000")


# ----------------------------------------------------------- 3: SIGTERM to team-demo
def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie is gone for our purposes (its port is closed); only its parent can reap it
    fields = _stat(Path(f"/proc/{pid}/stat"))
    return fields is not None and fields[0] != "Z"


def _stat(path: Path) -> list[str] | None:
    """The fields of a /proc/<pid>/stat after the command name (state first), None if gone."""
    try:
        return path.read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


DEMO_FOLDERS = "benchpress-team-demo-*"  # pipelines.team.demo's folder in the system temp dir


def _demo_postgres(earlier: set[Path], port: int) -> tuple[Path, int]:
    """The folder of the demo started after `earlier` was listed, and the pid of its
    PostgreSQL on `port` (postmaster.pid: the pid on line 1, the port on line 4)."""
    for folder in set(Path(tempfile.gettempdir()).glob(DEMO_FOLDERS)) - earlier:
        try:
            lines = (folder / "postgres" / "data" / "postmaster.pid").read_text().splitlines()
        except OSError:
            continue
        if len(lines) > 3 and lines[3].strip() == str(port):
            return folder, int(lines[0])
    raise AssertionError(f"no demo folder with a PostgreSQL on port {port}")


def _children(parent: int) -> dict[int, str]:
    """The pids whose parent is `parent`, with their start times (from /proc): a pid the
    system gives to another process after one of them ended is not that child."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        fields = _stat(stat)
        if fields is not None and int(fields[1]) == parent:
            found[int(stat.parent.name)] = fields[19]
    return found


def _still_running(children: dict[int, str]) -> list[int]:
    """The `children` alive now as the same processes (same start time)."""
    running = []
    for pid, started in children.items():
        fields = _stat(Path(f"/proc/{pid}/stat"))
        if fields is not None and fields[19] == started and _alive(pid):
            running.append(pid)
    return running


def _lines(stream, into: queue.Queue) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_the_team_demo_stops_its_postgres(signum: int) -> None:
    """The demo, once its PostgreSQL is up (its refreshes running), gets `signum`: it exits
    128 + signum and its PostgreSQL is gone, its port free, its folder removed."""
    signal_the_demo([sys.executable, "-m", "pipelines.team.demo"], signum)


def signal_the_demo(command: list[str], signum: int) -> None:
    earlier = set(Path(tempfile.gettempdir()).glob(DEMO_FOLDERS))
    demo = subprocess.Popen(
        command,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(demo.stdout, lines), daemon=True).start()
    seen: list[str] = []
    port = pid = folder = None
    children: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 120
        while port is None:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.1))
            assert line is not None, "".join(seen)
            seen.append(line)
            if match := re.match(r"PostgreSQL 127\.0\.0\.1:(\d+):", line):
                port = int(match.group(1))
        folder, pid = _demo_postgres(earlier, port)
        assert _alive(pid) and _port_open(port)

        children = _children(demo.pid)  # its refreshes, by now
        demo.send_signal(signum)
        code = demo.wait(timeout=60)
        gone = time.monotonic() + 60  # at once, unless the machine is loaded
        while (_alive(pid) or _port_open(port)) and time.monotonic() < gone:
            time.sleep(0.1)
        assert not _alive(pid), f"PostgreSQL (pid {pid}) outlived the demo"
        assert not _port_open(port), f"port {port} still answers"
        assert not _still_running(children)  # nor did its refreshes
        assert code == 128 + signum
        assert not folder.exists()  # the demo's folder is removed as on Ctrl-C
    finally:  # whatever the demo left behind (before the fix: its servers and refreshes)
        if demo.poll() is None:
            demo.kill()
            demo.wait()
        for orphan in [*_still_running(children), *([pid] if pid else [])]:
            if _alive(orphan):
                os.kill(orphan, signal.SIGKILL)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
