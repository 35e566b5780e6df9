"""`make dagster`: the Dagster UI and daemon on the code location, with our instance settings.

`dagster dev` is superseded in current Dagster (it points to `dg dev`) and, started from the
repository, warns that the repo's dagster.yaml "will not be used". This starts the two services
`dagster dev` wraps, `dagster-daemon run` (schedules, run queue, run monitoring) and
`dagster-webserver`, from DAGSTER_HOME = BENCHPRESS_HOME/dagster, where `ensure_dagster_home`
keeps a copy of the repo's dagster.yaml (or of deploy/dagster-team.yaml with
BENCHPRESS_INSTANCE=team), with a workspace file naming the `benchpress` location.

`make dagster PORT=3001` (`--port`) serves the UI on another port than 3000, e.g. beside
another `make dagster`; a port that is taken or not a port stops it before anything starts.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from pipelines.run import ensure_dagster_home
from pipelines.settings import refresh_workers
from pipelines.team.instance import check_instance
from warehouse.ducklake import check_warehouse

WORKSPACE = """\
# Written by `make dagster` (pipelines/ui.py): the benchpress code location.
load_from:
  - python_module:
      module_name: pipelines.definitions
      location_name: benchpress
"""


def write_workspace(dagster_home: Path) -> Path:
    path = dagster_home / "workspace.yaml"
    if not path.exists() or path.read_text() != WORKSPACE:
        path.write_text(WORKSPACE)
    return path


DEFAULT_PORT = 3000


def port_number(text: str) -> int:
    """`--port` / the Makefile's PORT: a TCP port, 1 to 65535."""
    try:
        port = int(text.strip())
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise ValueError(f"PORT={text!r} is not a port number (1 to 65535)")
    return port


def port_problem(host: str, port: int) -> str | None:
    """Why the UI cannot listen on host:port (taken by another server), None when it can."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return (
                f"port {port} on {host} is not free ({exc.strerror}): another `make dagster`? "
                f"choose another, e.g. `make dagster PORT={port + 1}`"
            )
    return None


def commands(dagster_home: Path, host: str, port: int) -> list[list[str]]:
    """The daemon, then the webserver, both on the workspace in `dagster_home`."""
    bin_dir = Path(sys.executable).parent
    workspace = str(write_workspace(dagster_home))
    return [
        [str(bin_dir / "dagster-daemon"), "run", "-w", workspace],
        [str(bin_dir / "dagster-webserver"), "-w", workspace, "-h", host, "-p", str(port)],
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make dagster", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default=str(DEFAULT_PORT), help="the UI's port (PORT=)")
    args = parser.parse_args(argv)
    try:  # BENCHPRESS_INSTANCE=team: its PostgreSQL must answer before anything starts
        args.port = port_number(args.port)
        taken = port_problem(args.host, args.port)
        if taken:
            raise ValueError(taken)
        profile = check_instance()
        check_warehouse()  # BENCHPRESS_WAREHOUSE=ducklake: its catalog and S3 too
        refresh_workers()  # BENCHPRESS_REFRESH_WORKERS, read when the code location loads
    except ValueError as exc:
        print(f"make dagster: error: {exc}", file=sys.stderr)
        return 2
    dagster_home = ensure_dagster_home()
    env = {**os.environ, "DAGSTER_HOME": str(dagster_home)}
    team = ", runs stored in PostgreSQL" if profile == "team" else ""
    print(f"Dagster instance: {dagster_home} (settings: {dagster_home / 'dagster.yaml'}{team})")
    print(f"Dagster UI on http://{args.host}:{args.port} (Ctrl-C stops the UI and the daemon)")
    children = [
        subprocess.Popen(cmd, env=env, cwd=dagster_home)
        for cmd in commands(dagster_home, args.host, args.port)
    ]

    def stop(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)  # `kill` or a supervisor: stop both, leave no orphan
    try:
        return children[1].wait()
    except KeyboardInterrupt:
        return 0
    finally:
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGINT)
        for child in children:
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                child.kill()


if __name__ == "__main__":
    raise SystemExit(main())
