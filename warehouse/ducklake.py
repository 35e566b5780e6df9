"""The shared warehouse: the same tables in a DuckLake lakehouse instead of the local DuckDB file.

`BENCHPRESS_WAREHOUSE` picks the backend: `duckdb` (the default: `warehouse.duckdb` in the home,
nothing to set up) or `ducklake`: DuckLake's catalog in PostgreSQL
(`BENCHPRESS_DUCKLAKE_CATALOG=postgresql://USER@HOST:PORT/DATABASE`, the password in
`BENCHPRESS_DUCKLAKE_PASSWORD`) and its data files in S3 (`BENCHPRESS_DUCKLAKE_DATA=s3://BUCKET/
PREFIX`, credentials and a custom endpoint from the standard AWS variables, as the s3:// snapshot
store reads them). Several machines (homes) then write one warehouse.

`LakeConnection.open()` attaches the lake to an in-memory DuckDB connection as its default
catalog (`USE`), so every query of the warehouse modules runs on it unchanged. What DuckLake
lacks is made up here:
- sequences: `payload_ids`, `fetch_ids` and `parse_ids` are PostgreSQL sequences in the catalog
  database (`next_id`), so two machines never draw the same id;
- primary keys, indexes: `lake_ddl` drops them from the migrations (the writers replace rows by
  key themselves); the local file's schema is untouched;
- the per-home refresh lock: a writer holds a PostgreSQL advisory lock of the catalog database
  for as long as its connection is open, as DuckDB holds the warehouse file for one writer, so
  the read-then-write steps (is this payload archived? was this payload set parsed?) of two
  machines never interleave. Each write is one DuckLake transaction: a failed step leaves
  nothing, and readers (read-only connections, no lock) only ever see committed snapshots.

The extensions come from the `duckdb-extension-*` wheels (the `team` extra), loaded from their
files: nothing is downloaded at run time. Credentials go to DuckDB as secrets, never into a
connection string or a message.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import socket
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import duckdb

from predictor.util.env_choice import env_choice

WAREHOUSE_ENV = "BENCHPRESS_WAREHOUSE"
CATALOG_ENV = "BENCHPRESS_DUCKLAKE_CATALOG"
PASSWORD_ENV = "BENCHPRESS_DUCKLAKE_PASSWORD"
DATA_ENV = "BENCHPRESS_DUCKLAKE_DATA"
BACKENDS = ("duckdb", "ducklake")
LAKE_SETTINGS = {  # variable -> what it holds, in the order messages list them
    CATALOG_ENV: "postgresql://USER@HOST:PORT/DATABASE of its catalog",
    DATA_ENV: "s3://BUCKET/PREFIX of its data files",
}
EXTENSIONS = ("ducklake", "postgres_scanner", "httpfs")  # loaded in this order
ALIAS = "lake"  # the attached catalog every query resolves to (USE)
SEQUENCE_PREFIX = "benchpress_"  # PostgreSQL sequences standing in for DuckDB's
LOCK_KEY = 0x62656E63  # pg_advisory_lock key of "the warehouse is being written" ('benc')
CONNECT_TIMEOUT_SECONDS = 5
DEFAULT_LOCK_WAIT = 900.0  # a writer waits this long for another machine's step (seconds)
CATALOG_SERVICE = "the shared warehouse's catalog (PostgreSQL)"
DATA_SERVICE = "the shared warehouse's data store (S3)"
INSTALL_HINT = "pip install -c constraints.txt '.[pipeline,team]'"


class WarehouseUnavailableError(ValueError):
    """The shared warehouse cannot be used as configured; the message names the service and
    the setting. A ValueError, so commands report it like a setting that cannot work (exit 2)."""


class WarehouseMissingError(WarehouseUnavailableError):
    """The catalog answers but holds no lake yet (no refresh has written it)."""


class WarehouseLostError(ConnectionError):
    """The lake's catalog or data store went away while a step used it (an OSError: one error
    line). The step's transaction did not commit, so the warehouse keeps what it had."""


class WarehouseBusyError(TimeoutError):
    """Another machine held the warehouse for writing longer than the lock wait."""


# ------------------------------------------------------------------------------- settings
def warehouse_backend() -> str:
    """BENCHPRESS_WAREHOUSE (unset or empty: `duckdb`), checked against the known backends."""
    return env_choice(WAREHOUSE_ENV, BACKENDS, "duckdb", "a warehouse backend")


@dataclass(frozen=True)
class S3Settings:
    """The standard AWS variables, as the s3:// snapshot store reads them."""

    region: str
    endpoint: str | None  # http(s)://HOST:PORT of an S3-compatible server, None for AWS
    key_id: str = field(repr=False)
    secret: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class LakeSettings:
    host: str
    port: int
    user: str
    database: str
    data_path: str  # s3://bucket/prefix/ (with the trailing slash DuckLake wants)
    s3: S3Settings
    password: str | None = field(default=None, repr=False)

    @property
    def where(self) -> str:
        """host:port/database, the part of the catalog setting that messages may show."""
        return f"{self.host}:{self.port}/{self.database}"

    @property
    def bucket(self) -> str:
        return urlsplit(self.data_path).netloc

    def secrets(self) -> list[str]:
        """Values that must never appear in what we print or write."""
        return [s for s in (self.password, self.s3.secret, self.s3.session_token) if s]


def _catalog(raw: str) -> tuple[str, int, str, str]:
    """(host, port, user, database) of postgresql://USER@HOST:PORT/DATABASE."""
    shape = f"{CATALOG_ENV} must look like postgresql://USER@HOST:PORT/DATABASE"
    parts = urlsplit(raw)
    if parts.scheme not in ("postgresql", "postgres"):
        raise ValueError(f"{shape}; it does not start with postgresql://")  # never echoed
    if parts.password is not None:
        raise ValueError(
            f"{CATALOG_ENV} holds a password: put it in {PASSWORD_ENV} instead (the catalog "
            "address is shown in messages, the password never)"
        )
    try:
        port = parts.port or 5432
    except ValueError:
        raise ValueError(f"{shape}: its port is not a number (1-65535)") from None
    database = unquote(parts.path.lstrip("/"))
    if not parts.hostname or not parts.username or not database or "/" in database:
        raise ValueError(f"{shape}, with a user, a host and a database")
    if parts.query or parts.fragment:
        raise ValueError(f"{shape}, without ?options")
    return parts.hostname, port, unquote(parts.username), database


S3_CREDENTIALS = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"


def _refuse_credentials(name: str, raw: str, instead: str) -> None:
    """A URL setting with user-info (`s3://KEY:SECRET@bucket`, `https://u:PW@host`) is refused
    before anything echoes it: the message names the setting, never the value. (Without
    `://`, as in `KEY:SECRET@bucket/x`, any `@` counts: the value is no URL to show either.)"""
    if "@" in urlsplit(raw).netloc or ("@" in raw and "://" not in raw):
        raise ValueError(f"{name}: credentials in the URL are refused; use {instead}")


def _data_path(raw: str) -> str:
    _refuse_credentials(DATA_ENV, raw, f"the {S3_CREDENTIALS} variables")
    parts = urlsplit(raw)
    prefix = parts.path.strip("/")
    if parts.scheme != "s3" or not parts.netloc or parts.query or parts.fragment:
        raise ValueError(f"{DATA_ENV} must be s3://BUCKET/PREFIX, got {raw!r}")
    if any(segment in ("", ".", "..") for segment in prefix.split("/") if prefix):
        raise ValueError(f"{DATA_ENV}={raw!r} has an empty, '.' or '..' part in its prefix")
    return f"s3://{parts.netloc}/{prefix}/" if prefix else f"s3://{parts.netloc}/"


def s3_settings(env: Mapping[str, str] | None = None) -> S3Settings:
    """The AWS variables of `env` (default: the environment)."""
    env = os.environ if env is None else env
    key_id = env.get("AWS_ACCESS_KEY_ID", "").strip()
    secret = env.get("AWS_SECRET_ACCESS_KEY", "")
    given = {"AWS_ACCESS_KEY_ID": key_id, "AWS_SECRET_ACCESS_KEY": secret}
    missing = [name for name, value in given.items() if not value]
    if missing:
        raise ValueError(
            f"{WAREHOUSE_ENV}=ducklake writes its data files to S3 with the credentials of the "
            f"standard AWS variables; not set: {', '.join(missing)}"
        )
    name = "AWS_ENDPOINT_URL_S3" if env.get("AWS_ENDPOINT_URL_S3") else "AWS_ENDPOINT_URL"
    endpoint = env.get(name, "").strip()
    if endpoint:
        _refuse_credentials(name, endpoint, f"the {S3_CREDENTIALS} variables")
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path.strip("/"):
            raise ValueError(
                f"AWS_ENDPOINT_URL(_S3)={endpoint!r} must be http(s)://HOST[:PORT] of an "
                "S3-compatible server"
            )
    region = (env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1").strip()
    return S3Settings(
        region=region,
        endpoint=endpoint or None,
        key_id=key_id,
        secret=secret,
        session_token=env.get("AWS_SESSION_TOKEN") or None,
    )


def lake_settings(env: Mapping[str, str] | None = None) -> LakeSettings:
    """BENCHPRESS_DUCKLAKE_* and the AWS variables of `env` (default: the environment);
    ValueError naming what is wrong."""
    env = os.environ if env is None else env
    values = {name: env.get(name, "").strip() for name in LAKE_SETTINGS}
    missing = [name for name, value in values.items() if not value]
    if missing:
        wanted = ", ".join(f"{name} ({LAKE_SETTINGS[name]})" for name in missing)
        raise ValueError(
            f"{WAREHOUSE_ENV}=ducklake keeps the warehouse in a DuckLake lakehouse configured "
            f"from the environment; not set: {wanted}"
        )
    host, port, user, database = _catalog(values[CATALOG_ENV])
    return LakeSettings(
        host=host,
        port=port,
        user=user,
        database=database,
        data_path=_data_path(values[DATA_ENV]),
        s3=s3_settings(env),
        password=env.get(PASSWORD_ENV) or None,  # as given: spaces may be meant
    )


def lock_wait() -> float:
    """BENCHPRESS_DUCKDB_LOCK_WAIT (the local file's lock wait), default DEFAULT_LOCK_WAIT."""
    raw = os.environ.get("BENCHPRESS_DUCKDB_LOCK_WAIT", "").strip()
    return float(raw) if raw else DEFAULT_LOCK_WAIT


# ----------------------------------------------------------------------------- extensions
def extension_file(name: str) -> Path:
    """The extension binary shipped by the `duckdb-extension-<name>` wheel for this DuckDB."""
    package = f"duckdb_extension_{name}"
    wheel = f"duckdb-extension-{name.replace('_', '-')}"
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise WarehouseUnavailableError(
            f"{WAREHOUSE_ENV}=ducklake needs DuckDB's {name} extension from the {wheel} "
            f"package (the team extra): {INSTALL_HINT}"
        )
    root = Path(next(iter(spec.submodule_search_locations))) / "extensions"
    path = root / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
    if not path.is_file():
        shipped = sorted(p.name for p in root.iterdir()) if root.is_dir() else []
        raise WarehouseUnavailableError(
            f"{WAREHOUSE_ENV}=ducklake: {wheel} ships the {name} extension for DuckDB "
            f"{', '.join(shipped) or 'no version'}, this is DuckDB v{duckdb.__version__}; "
            f"install the pinned versions: {INSTALL_HINT}"
        )
    return path


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def new_connection(settings: LakeSettings) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the extensions loaded and the catalog and S3 secrets made
    (in memory only: DuckDB never writes temporary secrets to disk)."""
    files = [extension_file(name) for name in EXTENSIONS]
    con = duckdb.connect(config={"autoinstall_known_extensions": "false"})  # nothing downloaded
    try:
        for path in files:
            con.execute(f"LOAD {_literal(str(path))}")
        s3 = settings.s3
        options = [
            "TYPE s3",
            f"KEY_ID {_literal(s3.key_id)}",
            f"SECRET {_literal(s3.secret)}",
            f"REGION {_literal(s3.region)}",
        ]
        if s3.session_token:
            options.append(f"SESSION_TOKEN {_literal(s3.session_token)}")
        if s3.endpoint:
            parts = urlsplit(s3.endpoint)
            options += [
                f"ENDPOINT {_literal(parts.netloc)}",
                "URL_STYLE 'path'",
                f"USE_SSL {'true' if parts.scheme == 'https' else 'false'}",
            ]
        con.execute(f"CREATE SECRET {ALIAS}_data ({', '.join(options)})")
        catalog = [
            "TYPE postgres",
            f"HOST {_literal(settings.host)}",
            f"PORT {settings.port}",
            f"USER {_literal(settings.user)}",
            f"DATABASE {_literal(settings.database)}",
        ]
        if settings.password is not None:
            catalog.append(f"PASSWORD {_literal(settings.password)}")
        con.execute(f"CREATE SECRET {ALIAS}_catalog ({', '.join(catalog)})")
        con.execute("SET TimeZone = 'UTC'")
    except BaseException:
        con.close()
        raise
    return con


def _attach_sql(settings: LakeSettings, alias: str, *options: str) -> str:
    listed = ", ".join(
        [f"DATA_PATH {_literal(settings.data_path)}", f"META_SECRET '{ALIAS}_catalog'", *options]
    )
    return f"ATTACH 'ducklake:postgres:' AS {alias} ({listed})"


# -------------------------------------------------------------------------- what failed
def _scrub(text: str, settings: LakeSettings) -> str:
    for secret in settings.secrets():
        text = text.replace(secret, "***")
    return text


_KNOWN_REASONS = [  # what libpq and httpfs say, wherever it sits in DuckDB's message
    re.compile(p)
    for p in (
        r'password authentication failed for user "[^"\n]*"',
        r"no password supplied",
        r'database "[^"\n]*" does not exist',
        r"Connection refused",
        r"server closed the connection unexpectedly",
        r"terminating connection due to administrator command",
        r"the database system is (?:shutting down|starting up|in recovery mode)",
        r'could not translate host name "[^"\n]*" to address',
        r"Connection timed out|timeout expired|No route to host",
        r"Could not connect to server",
    )
]


def reason_of(exc: BaseException, settings: LakeSettings) -> str:
    """The server's or client's reason on one line, without hints and never with a secret."""
    text = _scrub(str(exc).strip(), settings)
    for known in _KNOWN_REASONS:
        found = known.search(text)
        if found:
            return found.group(0)
    line = text.splitlines()[0] if text else type(exc).__name__
    line = line.replace("FATAL:", "").strip()
    line = re.sub(r"^(IO|HTTP|Invalid Input|TransactionContext) Error: ", "", line)
    return re.sub(r" error for HTTP [A-Z]+ to '[^']*'$", "", line)  # the request URL: noise


def catalog_failure(exc: BaseException, settings: LakeSettings, verb: str = "reach") -> str:
    """What went wrong talking to the catalog, naming the settings to fix."""
    reason = reason_of(exc, settings)
    lowered = reason.lower()
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        return (
            f"{CATALOG_SERVICE} at {settings.where} refused user {settings.user!r}: {reason} "
            f"(check {CATALOG_ENV} and {PASSWORD_ENV})"
        )
    if "database" in lowered and "does not exist" in lowered:
        return (
            f"{CATALOG_SERVICE} at {settings.host}:{settings.port} has no database "
            f"{settings.database!r} ({CATALOG_ENV}); create it or name another one"
        )
    return f"cannot {verb} {CATALOG_SERVICE} at {settings.where} ({CATALOG_ENV}): {reason}"


def data_failure(exc: BaseException, settings: LakeSettings) -> str:
    reason = reason_of(exc, settings)
    endpoint = settings.s3.endpoint or "AWS"
    if "nosuchbucket" in str(exc).lower().replace(" ", ""):
        return f"{DATA_SERVICE} at {endpoint} has no bucket {settings.bucket!r} ({DATA_ENV})"
    if "403" in reason or "accessdenied" in str(exc).lower().replace(" ", ""):
        return (
            f"{DATA_SERVICE} at {endpoint} refused access to {settings.data_path} "
            f"({DATA_ENV}; check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY): {reason}"
        )
    setting = f"{DATA_ENV}, AWS_ENDPOINT_URL" if settings.s3.endpoint else DATA_ENV
    return f"cannot reach {DATA_SERVICE} {settings.data_path} at {endpoint} ({setting}): {reason}"


_CATALOG_MARKS = (
    "postgres",
    "ducklake metadata",
    "most recent snapshot",
    "server closed the connection",
    "terminating connection",
    "connection refused",
    "the database system is",
)
_DATA_MARKS = ("http", "s3://", "could not connect to server")


def failed_service(exc: BaseException) -> str | None:
    """`catalog` or `data` when `exc` is that service failing (down, lost, refusing), else
    None (a bug, a conflict, bad SQL: those keep their own message)."""
    from_psycopg2 = type(exc).__module__.split(".")[0] == "psycopg2"
    if from_psycopg2:
        return "catalog"
    text = str(exc).lower()
    if not isinstance(exc, duckdb.Error) or "conflict" in text:
        return None  # a commit conflict is DuckLake's concurrency control at work, not a loss
    data = any(mark in text for mark in _DATA_MARKS)
    if data and "postgres" not in text:
        return "data"
    if any(mark in text for mark in _CATALOG_MARKS):
        return "catalog"
    return "data" if data else None


def unavailable(exc: BaseException, settings: LakeSettings) -> str | None:
    """`cannot reach ...` (or refused, no such bucket) for a service failing at connect."""
    service = failed_service(exc)
    if service == "catalog":
        return catalog_failure(exc, settings)
    return data_failure(exc, settings) if service == "data" else None


def lost_service(exc: BaseException, settings: LakeSettings) -> str | None:
    """`lost ...` when `exc` is the catalog or the data store going away mid-step, else None."""
    service = failed_service(exc)
    if service == "catalog":
        return "lost " + catalog_failure(exc, settings, "use").removeprefix("cannot use ")
    if service == "data":
        return "lost " + data_failure(exc, settings).removeprefix("cannot reach ")
    return None


# ------------------------------------------------------------------------ the catalog side
def _catalog_client(settings: LakeSettings, purpose: str) -> Any:
    """A psycopg2 connection to the catalog database (autocommit), for locks and sequences."""
    import psycopg2  # deferred: psycopg2 is the `team` extra's, only for the shared lake's catalog

    try:
        client = psycopg2.connect(
            host=settings.host,
            port=settings.port,
            user=settings.user,
            password=settings.password,
            dbname=settings.database,
            connect_timeout=CONNECT_TIMEOUT_SECONDS,
            application_name=f"benchpress {purpose} pid {os.getpid()} on {socket.gethostname()}",
        )
    except psycopg2.Error as exc:
        raise WarehouseUnavailableError(catalog_failure(exc, settings)) from None
    client.autocommit = True
    return client


def _lock_holder(client: Any) -> str:
    with client.cursor() as cursor:
        cursor.execute(
            "SELECT a.application_name, a.backend_start FROM pg_locks l"
            " JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory'"
            " AND l.granted AND l.classid = 0 AND l.objid = %s",
            (LOCK_KEY,),
        )
        row = cursor.fetchone()
    if row is None:
        return "a writer that has just finished"
    return f"{row[0] or 'an unnamed client'}, connected since {row[1]:%Y-%m-%d %H:%M:%S %Z}"


def _catalog_down(settings: LakeSettings) -> BaseException | None:
    """The error of connecting to the catalog now, or None when it answers."""
    import psycopg2  # deferred: psycopg2 is the `team` extra's, only for the shared lake's catalog

    try:
        psycopg2.connect(
            host=settings.host,
            port=settings.port,
            user=settings.user,
            password=settings.password,
            dbname=settings.database,
            connect_timeout=CONNECT_TIMEOUT_SECONDS,
        ).close()
    except psycopg2.Error as exc:
        return exc
    return None


def hold_write_lock(client: Any, settings: LakeSettings, wait: float) -> None:
    """Take the catalog's advisory write lock, waiting up to `wait` seconds for its holder."""
    deadline = time.monotonic() + wait
    delay = 0.05
    while True:
        with client.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", (LOCK_KEY,))
            if cursor.fetchone()[0]:
                return
        if time.monotonic() >= deadline:
            raise WarehouseBusyError(
                f"the shared warehouse at {settings.where} is being written by "
                f"{_lock_holder(client)}; waited {wait:g}s (BENCHPRESS_DUCKDB_LOCK_WAIT)"
            )
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


# --------------------------------------------------------------------------- migrations
_SEQUENCE = re.compile(r"^CREATE SEQUENCE (\w+)[^;]*;\s*$", re.MULTILINE)
_INDEX = re.compile(r"^CREATE INDEX [^;]*;\s*$", re.MULTILINE)
_KEY_DEFAULT = re.compile(r" PRIMARY KEY DEFAULT nextval\('(\w+)'\)")
_COLUMN_KEY = re.compile(r" PRIMARY KEY(?= *,| *\n| *$)")
_TABLE_KEY = re.compile(r",\s*\n\s*PRIMARY KEY \([^)]*\)\s*\n", re.MULTILINE)
_UNSUPPORTED = re.compile(r"PRIMARY KEY|UNIQUE|SEQUENCE|nextval|CREATE INDEX|REFERENCES", re.I)


def lake_ddl(sql: str) -> tuple[str, list[str]]:
    """A migration as DuckLake runs it, and the sequences it declares (made in PostgreSQL).

    DuckLake has no sequences, indexes or key constraints: their statements and clauses are
    dropped here (a key column becomes NOT NULL; types and column order stay), so one set of
    migration files describes both backends. A construct not handled here fails loudly
    instead of silently meaning something else on the lake."""
    sequences = _SEQUENCE.findall(sql)
    text = _SEQUENCE.sub("", sql)
    text = _INDEX.sub("", text)
    text = _KEY_DEFAULT.sub(" NOT NULL", text)  # a key column is never NULL, as in DuckDB
    text = _COLUMN_KEY.sub(" NOT NULL", text)
    text = _TABLE_KEY.sub("\n", text)
    code = "\n".join(line.split("--", 1)[0] for line in text.splitlines())
    leftover = _UNSUPPORTED.search(code)
    if leftover:
        raise ValueError(f"a migration uses {leftover.group(0)!r}, which DuckLake cannot run")
    return text, sequences


# -------------------------------------------------------------------------- the connection
@dataclass
class LakeConnection:
    """One attached lake: the DuckDB connection, and for a writer the catalog client holding
    the write lock and drawing ids."""

    settings: LakeSettings
    read_only: bool
    con: duckdb.DuckDBPyConnection | None = None
    client: Any = None

    def open(self) -> duckdb.DuckDBPyConnection:
        settings = self.settings
        try:
            if not self.read_only:
                self.client = _catalog_client(settings, "warehouse writer")
                hold_write_lock(self.client, settings, lock_wait())
            self.con = new_connection(settings)
            options = ("READ_ONLY",) if self.read_only else ()
            self.con.execute(_attach_sql(settings, ALIAS, *options))
            self.con.execute(f"USE {ALIAS}")
        except Exception as exc:
            self.close()
            if "does not exist" in str(exc) and "creating a new DuckLake" in str(exc):
                raise WarehouseMissingError(
                    f"no warehouse in {CATALOG_SERVICE} at {settings.where} yet: run "
                    "`benchpress refresh` to build it"
                ) from None
            message = unavailable(exc, settings)
            if message is None:
                raise
            raise WarehouseUnavailableError(message) from None
        except BaseException:
            self.close()
            raise
        return self.con

    def next_id(self, sequence: str) -> int:
        """The next value of one of the migrations' sequences (a PostgreSQL sequence)."""
        if self.client is None:
            raise RuntimeError("a read-only warehouse connection draws no ids")
        with self.client.cursor() as cursor:
            cursor.execute("SELECT nextval(%s)", (SEQUENCE_PREFIX + sequence,))
            return int(cursor.fetchone()[0])

    def create_sequences(self, names: list[str]) -> None:
        with self.client.cursor() as cursor:
            for name in names:
                if not re.fullmatch(r"\w+", name):
                    raise ValueError(f"not a sequence name: {name!r}")
                cursor.execute(f"CREATE SEQUENCE IF NOT EXISTS {SEQUENCE_PREFIX}{name} START 1")

    def close(self) -> None:
        if self.con is not None:
            try:
                self.con.close()
            finally:
                self.con = None
        if self.client is not None:
            with contextlib.suppress(Exception):  # a lost server has freed the lock already
                self.client.close()  # ends the session: PostgreSQL frees its advisory lock
            self.client = None


_OPEN: dict[int, LakeConnection] = {}  # id(DuckDB connection) -> its lake, while open


def lake_of(con: duckdb.DuckDBPyConnection) -> LakeConnection | None:
    """The lake behind `con`, or None for a local DuckDB connection."""
    lake = _OPEN.get(id(con))
    return lake if lake is not None and lake.con is con else None


@contextmanager
def lake_connection(read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """The lake attached as the default catalog; errors of a lost catalog or data store while
    the block runs become one-line `WarehouseLostError` errors."""
    settings = lake_settings()
    lake = LakeConnection(settings, read_only)
    con = lake.open()
    _OPEN[id(con)] = lake
    try:
        yield con
    except Exception as exc:
        lost = lost_service(exc, settings)
        if lost is None and isinstance(exc, duckdb.Error):
            # DuckLake's follow-up errors ("Current transaction is aborted") hide the cause:
            # ask the catalog itself whether it is still there
            down = _catalog_down(settings)
            lost = lost_service(down, settings) if down is not None else None
        if lost is None:
            raise
        raise WarehouseLostError(
            f"{lost}; this step's writes were not committed, the warehouse keeps what earlier "
            "steps committed"
        ) from None
    finally:
        _OPEN.pop(id(con), None)
        lake.close()


def open_reader() -> duckdb.DuckDBPyConnection:
    """A read-only connection to the lake (no lock: it reads committed snapshots only), for
    readers that close it themselves; WarehouseMissingError when nothing was written yet."""
    return LakeConnection(lake_settings(), read_only=True).open()


def check_warehouse() -> str:
    """The backend in force, once its services answer: nothing to check for `duckdb`; for
    `ducklake` the settings, the extensions, the catalog (a connection) and the data store
    (a listing of its prefix). Raises ValueError (WarehouseUnavailableError for a service) with
    one line saying what to fix; writes nothing."""
    backend = warehouse_backend()
    if backend == "duckdb":
        return backend
    settings = lake_settings()
    if importlib.util.find_spec("psycopg2") is None:
        raise WarehouseUnavailableError(
            f"{WAREHOUSE_ENV}=ducklake needs psycopg2 (the team extra): {INSTALL_HINT}"
        )
    client = _catalog_client(settings, "warehouse check")
    try:
        with client.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # noqa: BLE001 - psycopg2's errors, reported in one line
        raise WarehouseUnavailableError(catalog_failure(exc, settings)) from None
    finally:
        client.close()
    con = new_connection(settings)
    try:
        con.execute("SET http_retries = 1")  # a server that is down says so at once
        con.execute("SELECT count(*) FROM glob(?)", [settings.data_path + "*"]).fetchone()
    except duckdb.Error as exc:
        raise WarehouseUnavailableError(data_failure(exc, settings)) from None
    finally:
        con.close()
    return backend


# ------------------------------------------------------------------------------ time travel
def snapshot_at(con: duckdb.DuckDBPyConnection, when: datetime) -> tuple[int, datetime] | None:
    """The lake's newest snapshot (id, time) committed at or before `when`; None when the lake
    is younger than that."""
    row = con.execute(
        f"SELECT snapshot_id, snapshot_time FROM {ALIAS}.snapshots()"
        " WHERE snapshot_time <= ? ORDER BY snapshot_id DESC LIMIT 1",
        [when],
    ).fetchone()
    return (int(row[0]), row[1]) if row else None


@contextmanager
def as_of_snapshot(con: duckdb.DuckDBPyConnection, snapshot_id: int) -> Iterator[None]:
    """Within the block, `con` reads the lake as it was at `snapshot_id` (read-only)."""
    lake = lake_of(con)
    if lake is None:
        raise ValueError("time travel needs the DuckLake warehouse")
    then = f"{ALIAS}_then"
    version = f"SNAPSHOT_VERSION {int(snapshot_id)}"
    con.execute(_attach_sql(lake.settings, then, version, "READ_ONLY"))
    con.execute(f"USE {then}")
    try:
        yield
    finally:
        con.execute(f"USE {ALIAS}")
        con.execute(f"DETACH {then}")
