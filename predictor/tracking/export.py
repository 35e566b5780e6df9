"""A tracked run's checkpoints logged where teams follow their training runs: MLflow and
Weights & Biases (`benchpress track --mlflow URI / --wandb PROJECT`, and `benchpress run
--track`).

Both get the same metrics per step: `predicted/<benchmark>` (the predicted mean),
`predicted/<benchmark>/low` and `predicted/<benchmark>/high` (the interval at `level`),
`observed/<benchmark>` for each score the checkpoint was run on, and `p_all` when criteria were
given; the `/` groups them in both trackers' dashboards (W&B's sections, MLflow's metric
names allow it). The snapshot that predicted them is recorded as its pin
`VERSION@sha256:HEX` (MLflow param and tag `benchpress.snapshot`, W&B config of the same
name), so a number on a dashboard can be traced back to the exact snapshot.

MLflow's file store (`./mlruns`, `file:` URIs; in maintenance mode since MLflow 3) keeps a
metric as a file named by its key, so `predicted/B` beside `predicted/B/low` cannot be stored
there: such a URI is refused, naming sqlite:///FILE.db or a tracking server instead.

mlflow and wandb are optional extras, imported only when a function here runs; a missing one
is a `MissingExtraError` naming the extra. Any other failure of a tracker or of its client (a
server that does not answer, a refused login, a database that cannot be written) is an
`ExportError` of one line naming the tracker and where, credentials hidden.

An MLflow sqlite database is checked before MLflow gets it (its folder writable, the file a
database), since MLflow retries a database it cannot open for minutes; and it is written by
one benchpress process at a time (a lock in BENCHPRESS_HOME/locks, `predictor.util.locking`), as
two MLflow clients creating the tables of a new database at once fail.
"""

from __future__ import annotations

import base64
import io
import logging
import netrc
import os
import re
import tempfile
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from predictor.util import extras, locking

EXPERIMENT = "benchpress"  # the MLflow experiment the runs go to
RUN_TAG = "benchpress.run"  # the tracked run's name: a re-track finds its MLflow run by it
SNAPSHOT_TAG = "benchpress.snapshot"  # VERSION@sha256:HEX of the snapshot that predicted
PLOT_NAME = "benchpress/track"  # the plot: MLflow artifact benchpress/track.png, W&B image key
MLFLOW_EXTRA = "--mlflow needs the mlflow extra: pip install 'benchpress-llm[mlflow]'"
WANDB_EXTRA = "--wandb needs the wandb extra: pip install 'benchpress-llm[wandb]'"
WANDB_HOST = "https://api.wandb.ai"
# Unless the user set them: MLflow's usage telemetry (reported to its makers, an installation
# id under ~/.config) stays off while benchpress logs, as logging a run is not consent to it;
# and a server that does not answer fails in seconds, not after MLflow's 7 retries (4 minutes)
MLFLOW_DEFAULTS = {
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
}
# and its "View run at URL" lines never reach stdout, which is the command's (--json)
MLFLOW_FORCED = {"MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true"}
# what the trackers' clients may read credentials from: hidden in an error's message
SECRET_ENV = ("MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_TOKEN", "WANDB_API_KEY")
SQLITE_MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file
MAX_REASON = 300  # characters of a client's error message kept in the export error


class MissingExtraError(extras.MissingExtraError):
    """The tracker's package is not installed (the CLI prints it as one line, exit 2)."""


class ExportError(RuntimeError):
    """The tracker refused or could not be reached; the message names which and why."""


@dataclass(frozen=True)
class TrackedCheckpoint:
    """One checkpoint as the trackers get it."""

    step: int
    predictions: Mapping[str, tuple[float, float, float]]  # benchmark -> (mean, low, high)
    p_all: float | None = None  # P(every criterion holds); None without criteria
    observed: Mapping[str, float] = field(default_factory=dict)  # its own scores (probes)

    def metrics(self) -> dict[str, float]:
        """Its metrics under the names both trackers use, so dashboards read alike:
        `predicted/B`, `predicted/B/low`, `predicted/B/high`, `observed/B`, `p_all`."""
        out: dict[str, float] = {}
        for benchmark, (mean, low, high) in self.predictions.items():
            out[f"predicted/{benchmark}"] = float(mean)
            out[f"predicted/{benchmark}/low"] = float(low)
            out[f"predicted/{benchmark}/high"] = float(high)
        for benchmark, score in self.observed.items():
            out[f"observed/{benchmark}"] = float(score)
        if self.p_all is not None:
            out["p_all"] = float(self.p_all)
        return out


# ------------------------------------------------------------------------------ helpers
def display_uri(uri: str) -> str:
    """`uri` without a user or password, for printing: output lands in CI logs."""
    parts = urlsplit(uri)
    if parts.password is None and parts.username is None:
        return uri
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port is not None else "")
    return urlunsplit(parts._replace(netloc=netloc))


def sqlite_database(uri: str) -> Path | None:
    """The database file of `sqlite:///FILE.db` (absolute), None for any other URI."""
    scheme, sep, rest = uri.partition(":///")
    if scheme.split("+")[0].lower() != "sqlite":
        return None
    path = rest.split("?")[0]
    if not sep or not path or path.startswith(":memory:"):
        raise ExportError(f"MLflow at {uri}: give the database file, as sqlite:///FILE.db")
    return Path(path).absolute()  # sqlite:///a.db is relative, sqlite:////a.db not


def check_not_file_store(uri: str) -> None:
    """`ExportError` for an MLflow file store (a path or `file:` URI): it keeps each metric
    as a file named by its key, and `predicted/B` beside `predicted/B/low` would be a file
    and a folder of one name (module docstring)."""
    scheme = urlsplit(uri).scheme.lower()
    if scheme == "file" or scheme == "" or (len(scheme) == 1 and os.name == "nt"):
        raise ExportError(
            f"MLflow at {display_uri(uri)}: a file store cannot hold the metrics "
            "predicted/BENCHMARK beside predicted/BENCHMARK/low; give sqlite:///FILE.db "
            "(no server needed) or a tracking server's http(s):// URI"
        )


def sqlite_artifact_location(uri: str) -> str | None:
    """For `sqlite:///FILE.db`, the `artifacts` folder beside FILE (a file URI): MLflow's
    default would be ./mlruns of whatever folder the command runs in. None for any other
    URI (a tracking server stores artifacts itself, `--artifacts-destination`)."""
    database = sqlite_database(uri)
    if database is None:
        return None
    folder = database.parent
    if not folder.is_dir():
        what = (
            f"{folder} is not a folder"
            if folder.exists()
            else f"the folder {folder} does not exist"
        )
        raise ExportError(f"MLflow at {uri}: {what}")
    return (folder / "artifacts").as_uri()


def check_sqlite_database(uri: str, database: Path) -> None:
    """`ExportError` unless MLflow can write `database`: a file that is an SQLite database
    (or empty), or none yet, in a folder where files can be created (SQLite writes its journal
    beside the database). Checked before MLflow opens it, as MLflow retries a database it
    cannot open for minutes (ten attempts with growing sleeps) before failing."""
    where = f"MLflow at {display_uri(uri)}"
    if database.exists() or database.is_symlink():
        if not database.is_file():  # a folder, a FIFO (opening it would block), a dead link
            raise ExportError(f"{where}: {database} is not a file")
        try:
            with database.open("r+b") as handle:  # opened for writing; nothing is written
                head = handle.read(len(SQLITE_MAGIC))
        except OSError as exc:
            raise ExportError(f"{where}: cannot write {database} ({_os_reason(exc)})") from None
        if head and head != SQLITE_MAGIC:
            raise ExportError(f"{where}: {database} is not an SQLite database")
    try:
        with tempfile.TemporaryFile(dir=database.parent, prefix=".benchpress-"):
            pass  # a file can be created beside the database
    except OSError as exc:
        raise ExportError(
            f"{where}: cannot write in the folder {database.parent} ({_os_reason(exc)})"
        ) from None


def _os_reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _reason(exc: BaseException, uri: str | None = None) -> str:
    """A client's error as one bounded line for the export error: its message on one line,
    `uri` shown as `display_uri` shows it, and credentials (`_secrets`) replaced by `***`
    (a server may echo what it was sent)."""
    text = str(exc)
    if uri is not None:
        text = text.replace(uri, display_uri(uri))
    for secret in sorted(_secrets(uri), key=len, reverse=True):
        text = text.replace(secret, "***")
    line = " ".join(text.split()) or type(exc).__name__  # its lines, and any runs of spaces
    return line if len(line) <= MAX_REASON else line[: MAX_REASON - 3] + "..."


def _secrets(uri: str | None) -> set[str]:
    """The credentials a tracker's client may send: the trackers' keys in the environment, the
    URI's password (as written and decoded), and each user:password pair as HTTP basic
    authentication encodes it."""
    found = [os.environ.get(name, "") for name in SECRET_ENV]
    pairs = [
        (os.environ.get("MLFLOW_TRACKING_USERNAME"), os.environ.get("MLFLOW_TRACKING_PASSWORD"))
    ]
    try:
        parts = urlsplit(uri) if uri is not None else None
        if parts is not None and parts.password is not None:
            found += [parts.password, unquote(parts.password)]
            pairs.append((unquote(parts.username or ""), unquote(parts.password)))
    except ValueError:  # a port that is not a number: no credentials read from it
        pass
    for user, password in pairs:
        if user is not None and password:
            found.append(base64.b64encode(f"{user}:{password}".encode()).decode())
    return {secret for secret in found if len(secret) >= 3}


def _like_pattern(text: str) -> str:
    """A LIKE pattern matching at least `text`: MLflow's filter strings have no escapes, so
    every character that could end or steer the literal is the one-character wildcard `_`
    (the caller keeps the exact matches)."""
    return re.sub(r"[^A-Za-z0-9 .,:/@+=-]", "_", text)


@contextmanager
def _quiet(*loggers: str) -> Iterator[None]:
    """MLflow's INFO lines ("Creating initial MLflow database tables...") and its libraries'
    deprecation warnings (SQLAlchemy's) kept off stderr: they are not the user's to act on."""
    levels = {name: logging.getLogger(name).level for name in loggers}
    for name in loggers:
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            yield
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


@contextmanager
def _environ(
    defaults: Mapping[str, str], forced: Mapping[str, str] | None = None
) -> Iterator[None]:
    """Environment variables for the duration, then restored: `defaults` where unset (or
    empty), `forced` always. The trackers read their settings from there (W&B's service
    process its mode and cache folder, MLflow its switches)."""
    values = {k: v for k, v in defaults.items() if not os.environ.get(k)} | dict(forced or {})
    before = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# ------------------------------------------------------------------------------- MLflow
def require_mlflow() -> None:
    """Raise `MissingExtraError` unless mlflow imports: checked before anything is written."""
    try:
        with _environ(MLFLOW_DEFAULTS):  # read when mlflow is first imported
            import mlflow  # noqa: F401  # deferred: the optional `mlflow` extra, only for --mlflow
    except ImportError:
        raise MissingExtraError(MLFLOW_EXTRA) from None


def _experiment_id(client, name: str, artifact_location: str | None) -> str:
    """The experiment's id, created (artifacts at `artifact_location`) or restored if needed."""
    from mlflow.exceptions import MlflowException  # deferred: the optional `mlflow` extra

    found = client.get_experiment_by_name(name)
    if found is None:
        try:
            return client.create_experiment(name, artifact_location=artifact_location)
        except MlflowException as exc:  # created meanwhile by another client of the server
            if exc.error_code != "RESOURCE_ALREADY_EXISTS":
                raise
            found = client.get_experiment_by_name(name)
            if found is None:
                raise
    if found.lifecycle_stage == "deleted":
        client.restore_experiment(found.experiment_id)
    return found.experiment_id


def _runs_of(client, experiment_id: str, run: str) -> list[str]:
    """The ids of the active MLflow runs tagged as tracked run `run`."""
    query = f"tags.`{RUN_TAG}` LIKE '{_like_pattern(run)}'"
    ids, token = [], None
    while True:
        page = client.search_runs(
            [experiment_id], filter_string=query, max_results=1000, page_token=token
        )
        ids += [r.info.run_id for r in page if r.data.tags.get(RUN_TAG) == run]
        token = page.token
        if not token:
            return ids


def log_to_mlflow(
    uri: str,
    run: str,
    snapshot_pin: str,
    level: float,
    checkpoints: Sequence[TrackedCheckpoint],
    plot: bytes | None,
    plot_suffix: str = ".png",
    *,
    experiment: str = EXPERIMENT,
    criteria: str = "",
    home: Path | None = None,
) -> str:
    """Log the checkpoints as one MLflow run named `run` and return its id.

    A run tracked before under the same name (tag `benchpress.run`) is replaced: the new run
    is written whole first, then the old one deleted, so re-tracking never piles up runs
    and a failure leaves the previous one. `uri` is a tracking server (`http://...`) or
    `sqlite:///FILE.db` (no server; artifacts in `artifacts/` beside FILE), checked first
    (`check_sqlite_database`) and written under a lock of `home/locks` (home: default
    BENCHPRESS_HOME) by one process at a time. Any failure is an `ExportError`."""
    require_mlflow()
    check_not_file_store(uri)
    from mlflow.entities import Metric, Param  # deferred: the optional `mlflow` extra
    from mlflow.tracking import MlflowClient  # deferred: the optional `mlflow` extra

    where = f"MLflow at {display_uri(uri)}"
    artifacts = sqlite_artifact_location(uri)
    database = sqlite_database(uri)
    now = int(time.time() * 1000)
    metrics = [
        Metric(key, value, now, checkpoint.step)
        for checkpoint in checkpoints
        for key, value in checkpoint.metrics().items()
    ]
    params = [
        Param("level", f"{level:g}"),
        Param(SNAPSHOT_TAG, snapshot_pin),
        *([Param("criteria", criteria)] if criteria else []),
    ]
    tags = {RUN_TAG: run, SNAPSHOT_TAG: snapshot_pin}
    try:
        lock = nullcontext()
        if database is not None:  # one writer at a time: a new database's tables too
            lock_path = locking.lock_file("mlflow", str(database.resolve()), home)
            lock = locking.held(lock_path, "the database is busy, not logged")
        with lock, _quiet("mlflow", "alembic"), _environ(MLFLOW_DEFAULTS, MLFLOW_FORCED):
            if database is not None:
                check_sqlite_database(uri, database)
            client = MlflowClient(tracking_uri=uri)
            experiment_id = _experiment_id(client, experiment, artifacts)
            before = _runs_of(client, experiment_id, run)
            created = client.create_run(experiment_id, tags=tags, run_name=run)
            run_id = created.info.run_id
            try:
                client.log_batch(run_id, metrics=metrics, params=params, tags=[])
                if plot is not None:
                    with tempfile.TemporaryDirectory(prefix="benchpress-") as folder:
                        name = Path(PLOT_NAME)
                        path = Path(folder) / f"{name.name}{plot_suffix}"
                        path.write_bytes(plot)
                        client.log_artifact(run_id, str(path), artifact_path=str(name.parent))
            except BaseException:
                client.set_terminated(run_id, "FAILED")
                raise
            client.set_terminated(run_id, "FINISHED")
            for old in before:
                client.delete_run(old)
    except ExportError:
        raise
    except ImportError as exc:  # e.g. SQLAlchemy for sqlite:///
        raise MissingExtraError(f"{MLFLOW_EXTRA} ({exc.name or exc} is missing)") from None
    except Exception as exc:  # MLflow's, requests', SQLAlchemy's, alembic's, a lock's
        raise ExportError(f"{where}: {_reason(exc, uri)}") from exc
    return run_id


# ------------------------------------------------------------------------ Weights & Biases
def require_wandb() -> None:
    """Raise `MissingExtraError` unless wandb imports: checked before anything is written."""
    try:
        import wandb  # noqa: F401  # deferred: the optional `wandb` extra, only for --wandb
    except ImportError:
        raise MissingExtraError(WANDB_EXTRA) from None


def _netrc_has_key(environ: Mapping[str, str]) -> bool:
    """Whether `wandb login` left an API key in the netrc file for W&B's host."""
    host = urlsplit(environ.get("WANDB_BASE_URL") or WANDB_HOST).hostname or ""
    path = environ.get("NETRC") or str(Path("~/.netrc").expanduser())
    try:
        entry = netrc.netrc(path).authenticators(host)
    except (OSError, netrc.NetrcParseError):
        return False
    return bool(entry and entry[2])


def wandb_mode(environ: Mapping[str, str] | None = None) -> str:
    """W&B's mode: WANDB_MODE when set, else online only when an API key is configured
    (WANDB_API_KEY or a `wandb login`), so that without an account the run is kept offline
    and nothing is sent or asked."""
    environ = os.environ if environ is None else environ
    if environ.get("WANDB_MODE"):
        return environ["WANDB_MODE"]
    if environ.get("WANDB_API_KEY") or _netrc_has_key(environ):
        return "online"
    return "offline"


def log_to_wandb(
    project: str,
    run: str,
    snapshot_pin: str,
    level: float,
    checkpoints: Sequence[TrackedCheckpoint],
    plot: bytes | None,
    home: Path,
    *,
    criteria: str = "",
) -> Path:
    """Log the checkpoints as a new W&B run named `run` in `project` and return the run's
    folder (`offline-run-...` or `run-...`; `wandb sync FOLDER` uploads an offline one).

    The mode is `wandb_mode()`; files go under `home/wandb` (home: BENCHPRESS_HOME) unless
    WANDB_DIR says otherwise, W&B's own logs under `home/wandb/cache` unless WANDB_CACHE_DIR
    does. Each call is a new W&B run: W&B keeps a run's steps increasing, so a re-track
    cannot overwrite one. `plot` is PNG bytes. The run is finished and, unless the caller
    has a W&B run of its own, W&B's service process stopped before this returns."""
    require_wandb()
    import wandb  # deferred: the optional `wandb` extra, only for --wandb

    mode = wandb_mode()
    defaults = {"WANDB_MODE": mode, "WANDB_CACHE_DIR": str(home / "wandb" / "cache")}
    if mode != "online":
        defaults["WANDB_ERROR_REPORTING"] = "false"  # offline: no error reports either
    settings = wandb.Settings(
        console="off",  # the command's own output is not the run's log
        silent=True,
        disable_git=True,
        save_code=False,
        x_disable_stats=True,  # no system metrics sampled
        x_disable_meta=True,
        x_disable_machine_info=True,
    )
    caller_run = wandb.run is not None
    try:
        try:
            with _environ(defaults):
                where = {} if os.environ.get("WANDB_DIR") else {"dir": str(home)}
                if where:
                    home.mkdir(parents=True, exist_ok=True)
                tracked = wandb.init(
                    project=project,
                    name=run,
                    mode=mode,
                    config={SNAPSHOT_TAG: snapshot_pin, RUN_TAG: run, "level": level}
                    | ({"criteria": criteria} if criteria else {}),
                    tags=["benchpress"],
                    notes=f"benchpress track: predicted scores of {run}'s checkpoints by "
                    f"snapshot {snapshot_pin}",
                    reinit="create_new",  # never finishes a run of the caller's own
                    settings=settings,
                    **where,
                )
                folder = Path(tracked.settings.sync_dir)
                try:
                    for k, checkpoint in enumerate(checkpoints):
                        values: dict[str, object] = dict(checkpoint.metrics())
                        if plot is not None and k == len(checkpoints) - 1:
                            values[PLOT_NAME] = _wandb_image(wandb, plot)
                        tracked.log(values, step=checkpoint.step)
                except BaseException:
                    tracked.finish(exit_code=1)  # marked failed, not left running
                    raise
                tracked.finish()
        finally:
            if not caller_run:
                wandb.teardown()  # stops W&B's service process now, not at exit
    except Exception as exc:  # W&B's errors, its service's, a folder it cannot write
        raise ExportError(f"W&B project {project}: {_reason(exc)}") from exc
    return folder


def _wandb_image(wandb, plot: bytes):
    """The plot as a W&B image (Pillow comes with matplotlib, which drew the plot)."""
    from PIL import Image  # deferred: Pillow, installed with matplotlib, only with a plot

    return wandb.Image(Image.open(io.BytesIO(plot)), caption="predicted trajectories")
