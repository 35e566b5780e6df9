"""`make dagster`: the Dagster UI and daemon on the code location, with our instance settings.

`dagster dev` is superseded in current Dagster (it points to `dg dev`) and, started from the
repository, warns that the repo's dagster.yaml "will not be used". This starts the two services
`dagster dev` wraps, `dagster-daemon run` (schedules, run queue, run monitoring) and
`dagster-webserver`, from DAGSTER_HOME = BENCHPRESS_HOME/dagster, where `ensure_dagster_home`
keeps a copy of the repo's dagster.yaml (or of deploy/dagster-team.yaml with
BENCHPRESS_INSTANCE=team), with a workspace file naming the `benchpress` location.
"""

from __future__ import annotations

import argparse
import os
import signal
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
    parser.add_argument("--port", type=int, default=3000)
    args = parser.parse_args(argv)
    try:  # BENCHPRESS_INSTANCE=team: its PostgreSQL must answer before anything starts
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
