"""The private store: a team's own models and checkpoint runs, beside the public matrix.

One DuckDB file, `BENCHPRESS_HOME/private/models.duckdb`, apart from the pipeline's
`warehouse.duckdb`: nothing the pipeline reads or publishes can see it, so a private model
never reaches a snapshot. Its schema is versioned on its own (`store_schema`).

- `models`: one row per private model (name, run and step for a checkpoint, when it was
  added, the snapshot whose benchmark ids its scores use, the model as its files name it).
- `model_files`: the files each model was read from (path as given, sha256, tool).
- `cells`: every row of the results frame read for the model (mapped or not), with its full
  provenance (`predictor.results.frame.RESULT_SCHEMA`; `model` there is `source_model` here),
  `limited` and `limit` included (schema 2): a smoke test's score is stored only when the
  caller allows it (`--allow-limited`), and then says so.

Every import is one transaction (all models of a `track` run or none). Names are data: only
parameterised SQL touches them. Readers open the file read-only and never create it. A name
that reads as a public model's of the snapshot (the same NFKC form, or the same Unicode TR39
confusable skeleton: `gрt-4o` with a Cyrillic `р`, full-width `ｇｐｔ-４ｏ`) is refused
(`LookalikeNameError`), so a private model can never pass for a public one.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl

from predictor.names.confusables import skeleton
from predictor.names.resolve import display_names
from predictor.private import PROVENANCE_FIELDS
from predictor.results.frame import MAPPED, RESULT_SCHEMA
from predictor.results.inputs import row_stderr
from predictor.results.limited import limited_checked
from predictor.snapshots.reader import SnapshotError, default_stores, load_snapshot, resolve_version
from predictor.util.paths import PRIVATE_STORE_DIR, PRIVATE_STORE_FILE, private_store_path
from warehouse.db import open_waiting, transaction

STORE_DIR, STORE_FILE = PRIVATE_STORE_DIR, PRIVATE_STORE_FILE  # under BENCHPRESS_HOME
MAX_NAME_LENGTH = 200

_SCHEMA_V1 = """
CREATE TABLE models (
    name VARCHAR NOT NULL PRIMARY KEY,
    run VARCHAR,
    step BIGINT,
    added_at TIMESTAMPTZ NOT NULL,
    snapshot_version VARCHAR,
    source_models VARCHAR
);
CREATE TABLE model_files (
    model VARCHAR NOT NULL,
    file VARCHAR NOT NULL,
    file_sha256 VARCHAR NOT NULL,
    format VARCHAR,
    tool VARCHAR,
    tool_version VARCHAR
);
CREATE TABLE cells (
    model VARCHAR NOT NULL,
    source_model VARCHAR,
    benchmark_id VARCHAR,
    score DOUBLE,
    stderr DOUBLE,
    status VARCHAR NOT NULL,
    task VARCHAR,
    metric VARCHAR,
    raw_score DOUBLE,
    unit VARCHAR,
    n BIGINT,
    n_shot BIGINT,
    "group" VARCHAR,
    note VARCHAR,
    format VARCHAR,
    tool VARCHAR,
    tool_version VARCHAR,
    evaluated_at VARCHAR,
    file VARCHAR,
    file_sha256 VARCHAR
);
"""
# v2: whether a cell's run scored only part of the items (a smoke test kept with
# --allow-limited), and the limit; cells stored before are NULL (not known to be limited)
_SCHEMA_V2 = """
ALTER TABLE cells ADD COLUMN limited BOOLEAN;
ALTER TABLE cells ADD COLUMN "limit" VARCHAR;
"""
# v3: a cell of a run over a seeded random subset of the items (`benchpress run --items`):
# the task's item count (`n` of them scored) and which subset; NULL for every other cell
_SCHEMA_V3 = """
ALTER TABLE cells ADD COLUMN items_total BIGINT;
ALTER TABLE cells ADD COLUMN subset VARCHAR;
"""
# (version, DDL) in order; a store written by a newer benchpress is refused, not guessed at
MIGRATIONS: tuple[tuple[int, str], ...] = ((1, _SCHEMA_V1), (2, _SCHEMA_V2), (3, _SCHEMA_V3))
SCHEMA_VERSION = MIGRATIONS[-1][0]

CELL_COLUMNS = ["model", "source_model", *[c for c in RESULT_SCHEMA if c != "model"]]


class PrivateStoreError(RuntimeError):
    """The store file cannot be used (written by a newer benchpress, not a store)."""


class NameTakenError(ValueError):
    """A private model of that name exists already (the caller's input: exit 2)."""


class LookalikeNameError(NameTakenError):
    """The name reads as a public model's of the snapshot (the caller's input: exit 2)."""


@dataclass(frozen=True)
class ModelImport:
    """One private model to store: its name and the results-frame rows read for it (with
    benchmark ids resolved against `snapshot_version`)."""

    name: str
    rows: pl.DataFrame  # RESULT_SCHEMA columns
    run: str | None = None
    step: int | None = None
    snapshot_version: str | None = None


@dataclass(frozen=True)
class SaveReport:
    stored: list[str]
    replaced: list[str]  # names that existed before and were overwritten or dropped


def store_path(home: Path | None = None) -> Path:
    return private_store_path(home)


def check_name(name: str, what: str = "model name") -> str:
    """A usable name: non-empty, not padded, at most MAX_NAME_LENGTH characters. Any other
    character is allowed (names are data; printing escapes them)."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"the {what} must not be empty")
    if name != name.strip():
        raise ValueError(f"the {what} {name!r} starts or ends with blanks; give it without them")
    if len(name) > MAX_NAME_LENGTH:
        raise ValueError(f"the {what} is longer than {MAX_NAME_LENGTH} characters")
    return name


# ---------------------------------------------------------------------------- lookalikes
PublicNames = Mapping[str, frozenset[str]]  # lookalike key -> the public model ids spelt so
_NOT_KEPT = re.compile(r"[^\w.+]|_")  # separators, as `predictor.names.resolve.fold` drops them
_ASCII_NOT_KEPT = {c: None for c in range(128) if _NOT_KEPT.fullmatch(chr(c))}


def lookalike_keys(name: str) -> set[str]:
    """Keys under which two names read alike: the NFKC form, and the Unicode TR39 confusable
    skeleton (`predictor.names.confusables.skeleton`) taken before and after case folding (names
    are told apart regardless of case), each case-folded without separators (spaces, `-`,
    `_`, `/`, `@`; `.` and `+` kept, as `fold` keeps them). Letters of any script are kept:
    `日本語モデル` has keys of its own, it does not fold away."""
    if name.isascii():  # most names: the same keys, without normalising (a fast path)
        forms = {name.lower(), skeleton(name.lower()).lower(), skeleton(name).lower()}
        if all(f.isascii() for f in forms):
            return {k for f in forms if (k := f.translate(_ASCII_NOT_KEPT))}
    nfkc = unicodedata.normalize("NFKC", name)
    folded = nfkc.casefold()
    forms = {folded, skeleton(folded).casefold(), skeleton(nfkc).casefold()}
    return {k for f in forms if (k := _NOT_KEPT.sub("", f))}


def public_names(snapshot) -> dict[str, frozenset[str]]:
    """Lookalike key -> public model ids, over a snapshot's model ids, display names and
    model aliases (every spelling `BenchPress.resolve_model` knows)."""
    ids = snapshot.models["model_id"].to_list()
    spellings = [(i, i) for i in ids]
    spellings += [(n, i) for i, n in display_names(snapshot.models, "model_id").items()]
    aliases = snapshot.aliases.filter(pl.col("kind") == "model").select("name", "id").unique()
    spellings += [(n, i) for n, i in aliases.iter_rows() if isinstance(n, str)]
    index: dict[str, set[str]] = {}
    for spelt, model_id in set(spellings):
        for key in lookalike_keys(spelt):
            index.setdefault(key, set()).add(model_id)
    return {k: frozenset(v) for k, v in index.items()}


def public_lookalike(name: str, public: PublicNames) -> str | None:
    """The public model(s) `name` reads as (ids, comma-separated), or None."""
    found = sorted({m for key in lookalike_keys(name) for m in public.get(key, ())})
    return ", ".join(found) if found else None


@functools.cache
def _snapshot_names(directory: str) -> tuple[str, dict[str, frozenset[str]]]:
    snapshot = load_snapshot(Path(directory))
    return snapshot.version, public_names(snapshot)


def _public_of(version: str | None) -> tuple[str, PublicNames] | None:
    """(version, public names) of snapshot `version` in the default stores, else of the
    newest one there (a version only a remote store holds); None when there is none."""
    for wanted in dict.fromkeys([version or "latest", "latest"]):
        try:
            return _snapshot_names(str(resolve_version(wanted, default_stores())))
        except SnapshotError:
            continue
    return None


def check_public_lookalikes(
    imports: Sequence[ModelImport], public: PublicNames | None = None
) -> None:
    """Refuse (`LookalikeNameError`, naming the public model) any import whose name reads
    as a public model's: of `public` (`public_names(bp.snapshot)`) when given, else of each
    import's snapshot (`snapshot_version`, else the newest in the default stores)."""
    for item in imports:
        if public is not None:
            where: tuple[str | None, PublicNames] | None = (item.snapshot_version, public)
        else:
            where = _public_of(item.snapshot_version)
        if where is None:
            continue
        version, names = where
        found = public_lookalike(item.name, names)
        if found is None:
            continue
        spelt = item.name.encode("ascii", "backslashreplace").decode("ascii")
        shown = item.name if spelt == item.name else f"{item.name} ({spelt})"
        snapshot = f" (snapshot {version})" if version else ""
        raise LookalikeNameError(
            f"{shown} reads as the snapshot model {found}{snapshot}: the same letters once "
            "normalised (Unicode NFKC, confusable characters); a private model needs a "
            "name of its own"
        )


# ---------------------------------------------------------------------------- connections
def _version(con: duckdb.DuckDBPyConnection) -> int:
    tables = {
        row[0]
        for row in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        ).fetchall()
    }
    if "store_schema" not in tables:
        if tables:
            raise PrivateStoreError("the file is not a benchpress private store")
        return 0
    found = con.execute("SELECT max(version) FROM store_schema").fetchone()[0]
    return int(found or 0)


def _check_version(version: int, path: Path) -> None:
    if version > SCHEMA_VERSION:
        raise PrivateStoreError(
            f"{path} has schema version {version}, newer than this benchpress knows "
            f"({SCHEMA_VERSION}); upgrade benchpress to use it"
        )


def _migrate(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    version = _version(con)
    _check_version(version, path)
    for number, ddl in MIGRATIONS:
        if number <= version:
            continue
        with transaction(con):
            con.execute(
                "CREATE TABLE IF NOT EXISTS store_schema ("
                " version INTEGER NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"
            )
            con.execute(ddl)
            con.execute("INSERT INTO store_schema VALUES (?, now())", [number])


@contextmanager
def _writer(home: Path | None) -> Iterator[duckdb.DuckDBPyConnection]:
    path = store_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    con = open_waiting(path)
    try:
        con.execute("SET TimeZone = 'UTC'")
        _migrate(con, path)
        yield con
    finally:
        con.close()


@contextmanager
def _reader(home: Path | None) -> Iterator[duckdb.DuckDBPyConnection | None]:
    """A read-only connection, or None when there is no store (nothing is created)."""
    path = store_path(home)
    if not path.is_file():
        yield None
        return
    con = open_waiting(path, read_only=True)
    try:
        con.execute("SET TimeZone = 'UTC'")
        version = _version(con)
        _check_version(version, path)
        yield con if version else None
    finally:
        con.close()


# ---------------------------------------------------------------------------- writing
def _cell_frame(item: ModelImport) -> pl.DataFrame:
    rows = item.rows.select(list(RESULT_SCHEMA)).cast(RESULT_SCHEMA)
    return (
        rows.rename({"model": "source_model"})
        .with_columns(pl.lit(item.name, pl.String).alias("model"))
        .select(CELL_COLUMNS)
    )


def _file_frame(item: ModelImport) -> pl.DataFrame:
    return (
        item.rows.group_by("file", maintain_order=True)
        .agg(pl.col(c).first() for c in ("file_sha256", "format", "tool", "tool_version"))
        .with_columns(pl.lit(item.name, pl.String).alias("model"))
        .select("model", "file", "file_sha256", "format", "tool", "tool_version")
    )


def _insert_frame(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame) -> None:
    """Append `frame` to `table` (fixed names) as data: an Arrow view, no SQL text of it."""
    columns = ", ".join(f'"{c}"' for c in frame.columns)
    con.register("incoming", frame.to_arrow())
    try:
        con.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM incoming")
    finally:
        con.unregister("incoming")


def _delete(con: duckdb.DuckDBPyConnection, names: Sequence[str]) -> None:
    if not names:
        return
    for table, column in (("cells", "model"), ("model_files", "model"), ("models", "name")):
        con.execute(f"DELETE FROM {table} WHERE list_contains(?, {column})", [list(names)])


def _existing(con: duckdb.DuckDBPyConnection, names: Sequence[str]) -> list[str]:
    found = con.execute(
        "SELECT name FROM models WHERE list_contains(?, name) ORDER BY name", [list(names)]
    ).fetchall()
    return [row[0] for row in found]


def save_models(
    imports: Sequence[ModelImport],
    *,
    replace: bool = False,
    replace_run: str | None = None,
    home: Path | None = None,
    public: PublicNames | None = None,
    allow_limited: bool = False,
) -> SaveReport:
    """Store `imports` in ONE transaction: all of them or, on any error, none.

    A name that exists already is refused (`NameTakenError`) unless `replace`; with
    `replace_run`, every model of that run is dropped first (re-tracking a run replaces its
    checkpoints). A name that reads as a public model's is refused before anything is
    written (`LookalikeNameError`, see `check_public_lookalikes`; `public`: the snapshot's
    `public_names`, read from the imports' snapshot when not given). Scores of a run over
    part of the items (a smoke test) are refused (`ResultsError` naming the file and the
    limit) unless `allow_limited`; they are then stored with their `limited` and `limit`."""
    names = [check_name(item.name) for item in imports]
    if len(set(names)) != len(names):
        raise ValueError("the models to store must have distinct names")
    check_public_lookalikes(imports, public)
    if not allow_limited:
        for item in imports:
            limited_checked(item.rows)  # raises naming the file and the limit
    added_at = datetime.now(UTC)
    with _writer(home) as con, transaction(con):
        dropped: list[str] = []
        if replace_run is not None:
            dropped = [
                row[0]
                for row in con.execute(
                    "SELECT name FROM models WHERE run = ? ORDER BY step, name", [replace_run]
                ).fetchall()
            ]
            _delete(con, dropped)
        taken = _existing(con, names)
        if taken and not replace:
            raise NameTakenError(
                f"a private model named {taken[0]!r} exists already; pass --replace to "
                "overwrite it, or choose another name"
            )
        _delete(con, taken)
        for item in imports:
            sources = ", ".join(dict.fromkeys(item.rows["model"].drop_nulls().to_list()))
            con.execute(
                "INSERT INTO models VALUES (?, ?, ?, ?, ?, ?)",
                [item.name, item.run, item.step, added_at, item.snapshot_version, sources],
            )
            _insert_frame(con, "cells", _cell_frame(item))
            _insert_frame(con, "model_files", _file_frame(item))
    return SaveReport(names, sorted(set(dropped) | set(taken)))


def remove_models(
    names: Sequence[str] = (), run: str | None = None, home: Path | None = None
) -> list[str]:
    """Drop the named models and/or every model of `run`, in one transaction; returns the
    names removed. Nothing to remove is not an error here (the CLI says so)."""
    if not store_path(home).is_file():
        return []
    with _writer(home) as con, transaction(con):
        found = _existing(con, list(names)) if names else []
        if run is not None:
            found += [
                row[0]
                for row in con.execute(
                    "SELECT name FROM models WHERE run = ? ORDER BY step, name", [run]
                ).fetchall()
            ]
        found = list(dict.fromkeys(found))
        _delete(con, found)
    return found


# ---------------------------------------------------------------------------- reading
MODEL_LIST_SCHEMA = {
    "name": pl.String,
    "run": pl.String,
    "step": pl.Int64,
    "benchmarks": pl.Int64,
    "files": pl.Int64,
    "added_at": pl.String,
    "snapshot_version": pl.String,
    "source_models": pl.String,
}


def list_models(home: Path | None = None, run: str | None = None) -> pl.DataFrame:
    """One row per private model (`MODEL_LIST_SCHEMA`), ordered by run, step and name."""
    with _reader(home) as con:
        if con is None:
            return pl.DataFrame(schema=MODEL_LIST_SCHEMA)
        rows = con.execute(
            """
            SELECT m.name, m.run, m.step,
                   (SELECT count(DISTINCT c.benchmark_id) FROM cells c
                     WHERE c.model = m.name AND c.status = ?) AS benchmarks,
                   (SELECT count(*) FROM model_files f WHERE f.model = m.name) AS files,
                   strftime(m.added_at, '%Y-%m-%dT%H:%M:%SZ') AS added_at,
                   m.snapshot_version, m.source_models
            FROM models m
            WHERE ? IS NULL OR m.run = ?
            ORDER BY m.run NULLS FIRST, m.step NULLS FIRST, m.name
            """,
            [MAPPED, run, run],
        ).fetchall()
    return pl.DataFrame(rows, schema=MODEL_LIST_SCHEMA, orient="row")


def _cell_select(con: duckdb.DuckDBPyConnection) -> str:
    """`CELL_COLUMNS` as a select list; a column a store of an older schema lacks (read
    without migrating it: readers never write) is NULL."""
    present = {
        row[0]
        for row in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'cells'"
        ).fetchall()
    }
    # fixed names, never data
    return ", ".join(f'"{c}"' if c in present else f'NULL AS "{c}"' for c in CELL_COLUMNS)


def model_cells(name: str, home: Path | None = None) -> pl.DataFrame:
    """Every stored row of one model with its provenance (`CELL_COLUMNS`), mapped rows
    first by benchmark, then the others by task; empty if there is no such model."""
    schema = {"model": pl.String, "source_model": pl.String}
    schema.update({k: v for k, v in RESULT_SCHEMA.items() if k != "model"})
    with _reader(home) as con:
        if con is None:
            return pl.DataFrame(schema=schema)
        rows = con.execute(
            f"SELECT {_cell_select(con)} FROM cells WHERE model = ? "
            "ORDER BY status <> ?, benchmark_id, task, metric, file",
            [name, MAPPED],
        ).fetchall()
    return pl.DataFrame(rows, schema=schema, orient="row")


def model_files(name: str, home: Path | None = None) -> pl.DataFrame:
    schema = {k: pl.String for k in ("file", "file_sha256", "format", "tool", "tool_version")}
    with _reader(home) as con:
        if con is None:
            return pl.DataFrame(schema=schema)
        rows = con.execute(
            "SELECT file, file_sha256, format, tool, tool_version FROM model_files "
            "WHERE model = ? ORDER BY file",
            [name],
        ).fetchall()
    return pl.DataFrame(rows, schema=schema, orient="row")


def load_private_models(home: Path) -> list[dict[str, object]]:
    """The `benchpress.private_models` provider: every private model with its scores
    ({benchmark_id: score} of its mapped cells) and where each score came from
    (`provenance`: {benchmark_id: the cell's `PROVENANCE_FIELDS`}). [] without a store;
    never creates one."""
    columns = ", ".join(f'"{c}"' for c in PROVENANCE_FIELDS)  # fixed names, never data
    with _reader(Path(home)) as con:
        if con is None:
            return []
        models = con.execute(
            "SELECT name, run, step, strftime(added_at, '%Y-%m-%dT%H:%M:%SZ') FROM models "
            "ORDER BY run NULLS FIRST, step NULLS FIRST, name"
        ).fetchall()
        cells = con.execute(
            f"SELECT model, benchmark_id, score, stderr, n, unit, {columns} FROM cells "
            "WHERE status = ? "
            "AND benchmark_id IS NOT NULL AND score IS NOT NULL "
            "ORDER BY model, benchmark_id, file, task, metric",
            [MAPPED],
        ).fetchall()
    scores: dict[str, dict[str, float]] = {}
    errors: dict[str, dict[str, float]] = {}
    provenance: dict[str, dict[str, dict[str, object]]] = {}
    for model, benchmark, score, stderr, n, unit, *facts in cells:  # one cell
        scores.setdefault(model, {})[benchmark] = float(score)
        error = row_stderr({"score": score, "stderr": stderr, "n": n, "unit": unit})
        if error is not None:
            errors.setdefault(model, {})[benchmark] = error
        provenance.setdefault(model, {})[benchmark] = dict(
            zip(PROVENANCE_FIELDS, facts, strict=True)
        )
    return [
        {
            "name": name,
            "run": run,
            "step": step,
            "scores": scores.get(name, {}),
            "stderr": errors.get(name, {}),
            "provenance": provenance.get(name, {}),
            "added_at": at,
        }
        for name, run, step, at in models
    ]
