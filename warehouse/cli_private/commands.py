"""`benchpress models add|list|show|remove` and `benchpress track`: a team's own models and
checkpoint runs, kept in the private store (`warehouse.private_models`), never published.

Every input is checked before anything is written: a bad file anywhere in the set, a name
taken by a snapshot model, a malformed criterion exits 2 with the store unchanged. Names are
data: everything printed from a name or a file goes through `printable`. Tables and
`--json`/`--csv` go through `predictor.cli.output`.

A tracked checkpoint is stored as the private model `RUN@step-N` of run RUN; tracking the
same RUN again replaces all its checkpoints (and says so).

Imported when one of these commands is parsed (`warehouse.cli_private` declares them), so
`benchpress --help` loads no DuckDB.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import os
import secrets
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from predictor.api import BenchPress
from predictor.cli.options import (
    target_names,
)
from predictor.cli.output import (
    EXIT_FAILED,
    CommandError,
    emit,
    frame_rows,
    level_label,
    no_scores_error,
    print_inputs,
    print_side,
    print_table,
    printable,
)
from predictor.names.resolve import AmbiguousNameError, UnknownNameError, fold
from predictor.results import expand_paths, model_rows, parse_overrides
from predictor.results.errors import ResultsError
from predictor.results.inputs import ResultInputs, summarise
from predictor.results.limited import limited_checked
from predictor.tracking import checkpoints as tracking
from predictor.tracking import export as track_export
from predictor.tracking.checkpoints import TrackInputError
from predictor.tracking.export import ExportError, MissingExtraError, TrackedCheckpoint
from predictor.tracking.plot import TargetSeries, plot_format, render
from predictor.trust.profiles import resolve_targets
from predictor.util import locking
from predictor.util.fraction_scores import fractional_threshold_messages
from predictor.util.paths import benchpress_home
from predictor.values import Noise, predictions_frame
from warehouse import private_models
from warehouse.cli_private.arguments import DEFAULT_TARGETS

N_DRAWS = 4000  # joint predictive draws per checkpoint for --require


# ---------------------------------------------------------------------------- helpers
def _guarded(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """The caller's input errors as usage errors (exit 2, one escaped line); a store that
    cannot be used as a failure (exit 1)."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except (ResultsError, TrackInputError, private_models.NameTakenError) as exc:
            raise CommandError(printable(exc)) from None
        except (private_models.PrivateStoreError, duckdb.Error) as exc:
            print(f"benchpress: error: private store: {printable(exc)}", file=sys.stderr)
            return EXIT_FAILED

    return run


def _name(text: str, what: str) -> str:
    try:
        return private_models.check_name(text, what)
    except ValueError as exc:
        raise CommandError(printable(exc)) from None


def _load(args: argparse.Namespace) -> BenchPress:
    return BenchPress.load(args.version, store=args.store)


def public_clash(bp: BenchPress, name: str) -> str | None:
    """The snapshot model(s) `name` resolves to, or None when it names none."""
    resolver = bp.resolve_model
    key = fold(name) if isinstance(name, str) else ""
    if key not in resolver.folded and key not in getattr(resolver, "_settings", {}):
        # no id, alias or display name folds to it, so no lookup can match: skip the
        # close-match search of the error message (slow over thousands of models)
        return None
    try:
        return resolver(name)
    except AmbiguousNameError as exc:
        return ", ".join(exc.suggestions)
    except (UnknownNameError, TypeError):
        return None


def _refuse_public(bp, name: str) -> None:
    found = public_clash(bp, name)
    if found is not None:
        raise CommandError(
            f"{printable(name)} names the snapshot model {printable(found)} (snapshot "
            f"{bp.version}); a private model needs a name of its own"
        )


def _model_rows(frame: pl.DataFrame, model: str | None, what: str) -> pl.DataFrame:
    """The rows of one model of the files; several without --model is an error naming which
    files hold which model."""
    names = frame["model"].unique(maintain_order=True).to_list()
    if model is None and len(names) > 1:
        by_model = [
            f"{printable(n)} in "
            + ", ".join(
                printable(f)
                for f in frame.filter(pl.col("model") == n)["file"].unique(maintain_order=True)
            )
            for n in names[:4]
        ]
        raise ResultsError(
            what,
            f"the files hold {len(names)} models: " + "; ".join(by_model),
            hint="one private model is one model's results: choose one with --model NAME, "
            "or leave the other files out",
        )
    return model_rows(frame, model)


def _inputs(
    bp: BenchPress, paths: Sequence[str | Path], args: argparse.Namespace, what: str
) -> tuple[pl.DataFrame, ResultInputs]:
    """(frame rows of the chosen model, ResultInputs) of `paths` on `bp`'s benchmark ids;
    scores of a run over part of the items (a smoke test) refused unless `--allow-limited`."""
    frame = bp.read_results([str(p) for p in paths], overrides=parse_overrides(args.maps))
    rows = limited_checked(_model_rows(frame, args.from_model, what), args.allow_limited)
    inputs = summarise(rows)
    if not inputs.scores:
        empty = no_scores_error(inputs)
        files = ", ".join(str(p) for p in paths)
        hint = (empty.hint or "").replace(", or give --scores", "")  # no --scores here
        raise ResultsError(f"{what} ({files})", empty.problem, empty.field, hint)
    return rows, inputs


def _close_names(name: str, names: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(names), n=3, cutoff=0.6)
    return f"; did you mean: {', '.join(printable(c) for c in close)}?" if close else ""


def _shown(frame: pl.DataFrame, columns: Sequence[str]) -> list[dict[str, object]]:
    """Rows for `print_table`: missing values blank, text escaped."""
    return [
        {
            c: "" if r[c] is None else printable(r[c]) if isinstance(r[c], str) else r[c]
            for c in columns
        }
        for r in frame_rows(frame)
    ]


# ---------------------------------------------------------------------------- models add
@_guarded
def cmd_models_add(args: argparse.Namespace) -> int:
    name = _name(args.name, "model name")
    if not args.from_paths:
        raise CommandError("models add needs --from PATH (results files, folders or globs)")
    bp = _load(args)
    _refuse_public(bp, name)
    rows, inputs = _inputs(bp, args.from_paths, args, "--from")
    existing = set(private_models.list_models()["name"].to_list())
    if name in existing and not args.replace:
        raise CommandError(
            f"a private model named {printable(name)} exists already; pass --replace to "
            "overwrite it, or choose another name"
        )
    report = private_models.save_models(
        [private_models.ModelImport(name, rows, snapshot_version=bp.version)],
        replace=args.replace,
        allow_limited=args.allow_limited,
    )
    stored = rows.filter(pl.col("status") == "mapped")
    replaced = " (replacing the earlier one)" if report.replaced else ""

    def table() -> None:
        print_inputs(inputs)
        print(
            f"stored private model {printable(name)}{replaced}: {len(inputs.scores)} scores "
            f"on snapshot {bp.version} benchmarks, {len(inputs.files)} file(s), "
            f"{rows.height} rows with provenance"
        )

    payload = {
        "name": name,
        "version": bp.version,
        "replaced": bool(report.replaced),
        "scores": inputs.scores,
        "inputs": inputs.as_dict(),
    }
    emit(args, stored, payload=payload, table=table)
    return 0


# ---------------------------------------------------------------------------- models list
LIST_COLUMNS = ["name", "run", "step", "benchmarks", "files", "added_at", "snapshot_version"]


@_guarded
def cmd_models_list(args: argparse.Namespace) -> int:
    frame = private_models.list_models(run=args.run)

    def table() -> None:
        if frame.height:
            print_table(_shown(frame, LIST_COLUMNS), LIST_COLUMNS)
        elif args.run is not None:
            print(f"no private models in run {printable(args.run)}")
        else:
            print("no private models yet; add one: benchpress models add NAME --from FILES")

    emit(args, frame, table=table)
    return 0


# ---------------------------------------------------------------------------- models show
CELL_COLUMNS = [
    "benchmark_id",
    "score",
    "stderr",
    "status",
    "task",
    "metric",
    "n",
    "n_shot",
    "tool",
    "tool_version",
    "evaluated_at",
    "file",
    "note",
]


def _unknown_model(name: str) -> CommandError:
    names = private_models.list_models()["name"].to_list()
    return CommandError(
        f"no private model named {printable(name)}{_close_names(name, names)} "
        "(benchpress models list shows them)"
    )


@_guarded
def cmd_models_show(args: argparse.Namespace) -> int:
    listing = private_models.list_models().filter(pl.col("name") == args.name)
    if not listing.height:
        raise _unknown_model(args.name)
    model = listing.row(0, named=True)
    cells = private_models.model_cells(args.name)
    files = private_models.model_files(args.name)
    predictions = _headline(args, cells)

    def table() -> None:
        where = f", run {printable(model['run'])} step {model['step']}" if model["run"] else ""
        print(
            f"private model {printable(model['name'])}{where}: added {model['added_at']}, "
            f"benchmark ids of snapshot {model['snapshot_version']}, read from "
            f"{printable(model['source_models'] or '?')} in {files.height} file(s)"
        )
        for f in files.iter_rows(named=True):
            print(
                f"  {printable(f['file'])}  sha256 {f['file_sha256'][:12]}  "
                f"{printable(f['tool'] or '')} {printable(f['tool_version'] or '')}".rstrip()
            )
        print()
        print_table(_shown(cells, CELL_COLUMNS), CELL_COLUMNS)
        if predictions is not None:
            bp_version, level, frame = predictions
            print()
            print(f"predicted on snapshot {bp_version} ({level_label(level)} intervals):")
            rows = [
                {**r, "kind": "observed" if r["observed"] else "predicted"}
                for r in frame_rows(frame)
            ]
            print_table(rows, ["benchmark", "score", "low", "high", "kind"])

    payload: dict[str, Any] = {
        "model": model,
        "files": frame_rows(files),
        "cells": frame_rows(cells),
    }
    if predictions is not None:
        payload["predictions"] = {
            "version": predictions[0],
            "level": predictions[1],
            "rows": frame_rows(predictions[2]),
        }
    emit(args, cells, payload=payload, table=table)
    return 0


def _headline(args: argparse.Namespace, cells: pl.DataFrame):
    """(version, level, predictions frame) of the headline targets from the stored scores,
    or None when none of them is fitted in the snapshot."""
    bp = _load(args)
    scores = {
        b: s
        for b, s, status in cells.select("benchmark_id", "score", "status").iter_rows()
        if b is not None and s is not None and b in bp.fit_benchmarks_
    }
    if not scores:
        return None
    targets = target_names(args.targets) or DEFAULT_TARGETS
    # the private model's name gives the fold-in its family, as for any named model
    predictions = bp.predict(scores, level=args.level, targets=targets, model=args.name)
    return bp.version, args.level, predictions_frame(predictions)


# ---------------------------------------------------------------------------- models remove
@_guarded
def cmd_models_remove(args: argparse.Namespace) -> int:
    if (args.name is None) == (args.run is None):
        raise CommandError("give the model NAME to remove, or --run RUN (not both)")
    removed = private_models.remove_models(
        [args.name] if args.name is not None else [], run=args.run
    )
    if not removed:
        if args.name is not None:
            raise _unknown_model(args.name)
        raise CommandError(f"no private models in run {printable(args.run)}")
    what = f"run {printable(args.run)}: " if args.run is not None else ""
    shown = ", ".join(printable(n) for n in removed)
    print(f"removed {len(removed)} private model(s) {what}{shown}")
    return 0


# ---------------------------------------------------------------------------- track
def _plot_path(text: str | None) -> Path | None:
    """`--plot PATH`, checked before anything is read: a .png or .svg in an existing folder,
    with no folder, symlink or other non-file at PATH (the plot replaces a regular file only,
    and is never written through a link)."""
    if text is None:
        return None
    path = Path(text)
    try:
        plot_format(path)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if not path.parent.is_dir():
        raise CommandError(
            f"--plot {printable(text)}: the folder {printable(path.parent)} does not exist"
        )
    if path.is_symlink():
        raise CommandError(
            f"--plot {printable(text)}: a symbolic link is there; the plot is never written "
            "through a link, name another file or remove the link"
        )
    if path.is_dir():
        raise CommandError(f"--plot {printable(text)}: a folder is there; name a file")
    if path.exists() and not path.is_file():
        raise CommandError(f"--plot {printable(text)}: not a regular file; name a file")
    return path


def _checkpoint_names(run: str, steps: Sequence[int]) -> None:
    """Every checkpoint's private model name `RUN@step-N` usable (the store's name rules),
    checked before anything is read or predicted: a long run name must not fail at the end."""
    for step in steps:
        name = tracking.checkpoint_name(run, step)
        if len(name) > private_models.MAX_NAME_LENGTH:
            raise CommandError(
                f"the checkpoint name {printable(name)} is longer than "
                f"{private_models.MAX_NAME_LENGTH} characters; give the run a shorter name"
            )
        _name(name, "checkpoint name")


def _stage_plot(path: Path, image: bytes) -> Path:
    """`image` in a new temporary file beside `path` (same folder: `os.replace` moves it into
    place atomically; created exclusively, with the permissions a new file gets); the caller
    replaces or removes it."""
    staged = path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    handle = os.open(staged, flags, 0o666)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(image)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    return staged


def _criteria_noise(bp, found: ResultInputs, criteria) -> dict[str, Noise]:
    """benchmark -> the noise a checkpoint's observed score on a criterion's benchmark is
    judged with: its standard error (the file's, or binomial on its items), else the
    benchmark's default (`BenchPress.measurement_noise`)."""
    wanted = dict.fromkeys(c.benchmark for c in criteria)
    return {
        b: bp.measurement_noise(b, found.scores[b], found.stderr.get(b))
        for b in wanted
        if b in found.scores
    }


def _noise_lines(noises: list[dict[str, Noise]]) -> list[str]:
    """The table's note on criteria judged on observed scores: each benchmark's noise (the
    first checkpoint's; the JSON has every checkpoint's)."""
    seen: dict[str, Noise] = {}
    for noise in noises:
        for benchmark, n in noise.items():
            seen.setdefault(benchmark, n)
    if not seen:
        return []
    shown = "; ".join(f"{b} +-{n.sd:.2g} ({n.source})" for b, n in seen.items())
    return [f"criteria on observed scores take them as measured: {shown}"]


def _cell(prediction) -> str:
    if prediction.observed:
        return f"{prediction.score:.1f} observed"
    return f"{prediction.score:.1f} ({prediction.low:.1f}-{prediction.high:.1f})"


TRACK_SCHEMA = {
    "run": pl.String,
    "step": pl.Int64,
    "model": pl.String,
    "benchmark": pl.String,
    "score": pl.Float64,
    "low": pl.Float64,
    "high": pl.Float64,
    "level": pl.Float64,
    "observed": pl.Boolean,
    "p_all": pl.Float64,
}


def _stored_checkpoints(run: str, skip: set[int]) -> list[tuple[int, str, ResultInputs]]:
    """(step, name, scores) of the run's checkpoints in the store, but the steps `skip`: read
    back as they were stored, so `track --step N` shows and logs the whole run."""
    stored = []
    listed = private_models.list_models(run=run)
    for name, step in listed.select("name", "step").iter_rows():
        if step is None or step in skip:
            continue
        cells = private_models.model_cells(name)
        rows = cells.drop("model").rename({"source_model": "model"})
        stored.append((int(step), name, summarise(rows)))
    return stored


@_guarded
def cmd_track(args: argparse.Namespace) -> int:
    run = _name(args.run, "run name")
    if not args.from_paths:
        raise CommandError("track needs --from PATH (the checkpoints' results files or a glob)")
    pattern = tracking.compile_step_pattern(args.step_from)
    wanted = tracking.parse_criteria(args.require) if args.require is not None else []
    plot = _plot_path(args.plot)
    _check_trackers(args)
    files = expand_paths(args.from_paths)
    # --step N: the files are all checkpoint N, added to the run's stored ones
    checkpoints = (
        [(args.step, files)] if args.step is not None else tracking.group_by_step(files, pattern)
    )
    _checkpoint_names(run, [step for step, _ in checkpoints])

    bp = _load(args)
    # every checkpoint is the run's model: its family read from the run's name
    side = {
        "model": run,
        "family": args.family,
        "release_date": args.release_date,
        "base": args.base,
    }
    side_used = bp.side_for(**side)[0]
    criteria = tracking.resolve_criteria(wanted, bp.resolve_benchmark, bp.fit_benchmarks_)
    percent = [b for b in bp.fit_benchmarks_ if bp.scale_of(b) == "percent"]
    as_fractions = fractional_threshold_messages(
        ((c.benchmark, c.op, c.threshold) for c in criteria), percent
    )
    if as_fractions:  # P(all) would be ~1 (or ~0) without a word
        raise TrackInputError(as_fractions[0])
    targets = resolve_targets(
        target_names(args.targets) or DEFAULT_TARGETS, bp.fit_benchmarks_, bp.resolve_benchmark
    ) or list(bp.fit_benchmarks_)
    shown = list(dict.fromkeys([*targets, *(c.benchmark for c in criteria)]))

    imports: list[private_models.ModelImport] = []
    wanted_names = {tracking.checkpoint_name(run, step) for step, _ in checkpoints}
    others = private_models.list_models().filter(pl.col("name").is_in(list(wanted_names)))
    clash = [n for n, r in others.select("name", "run").iter_rows() if r != run]
    if clash:
        raise CommandError(
            f"the private model {printable(clash[0])} exists outside run {printable(run)}; "
            f"remove it first (benchpress models remove NAME) or track under another run name"
        )
    # read and check every checkpoint before anything is written
    read = []
    for step, paths in checkpoints:
        name = tracking.checkpoint_name(run, step)
        _refuse_public(bp, name)
        rows, found = _inputs(bp, paths, args, f"checkpoint step {step}")
        read.append((step, name, found))
        imports.append(
            private_models.ModelImport(name, rows, run=run, step=step, snapshot_version=bp.version)
        )
    # one track of a run at a time, from reading its stored checkpoints through logging
    # them: two at once would each store and log the run without the other's checkpoint
    busy = f"run {run} is being tracked by another process; nothing was stored"
    with locking.held(locking.lock_file("track", run), busy):
        if args.step is not None:
            read = sorted([*read, *_stored_checkpoints(run, {args.step})], key=lambda c: c[0])
        steps, names, inputs, predictions, p_all, p_each = [], [], [], [], [], []
        noises: list[dict[str, Noise]] = []
        for step, name, found in read:
            steps.append(step)
            names.append(name)
            inputs.append(found)
            # each score with its standard error (the file's, or binomial on its items)
            scores = found.measured
            # converted from the files' own units: a score under 1% is not a fraction
            given = {**side, "convert_fractions": not found.units_known}
            predictions.append(bp.predict(scores, level=args.level, targets=shown, **given))
            if criteria:
                benchmarks, draws = bp.predictive_draws(
                    scores, n=N_DRAWS, level=args.level, **given
                )
                noise = _criteria_noise(bp, found, criteria)
                noises.append(noise)
                measured = {b: (found.scores[b], n.sd) for b, n in noise.items()}
                draws = bp.in_range(tracking.with_measurement_noise(draws, benchmarks, measured))
                p_all.append(tracking.joint_probability(draws, benchmarks, criteria))
                p_each.append(tracking.marginal_probabilities(draws, benchmarks, criteria))
        first = tracking.first_meeting(steps, p_all) if criteria else None
        drawing = (steps, shown, predictions, inputs, run, args.level, p_all, criteria)
        image = None if plot is None else _render(plot_format(plot), *drawing)
        # the trackers get a PNG: --plot's when it is one, else one drawn for them
        png = (
            image
            if plot is not None and plot_format(plot) == "png"
            else _tracker_plot(args, drawing)
        )

        # the plot is written beside PATH first (a full disk, a read-only folder fail here, with
        # nothing stored), the store committed, then the plot moved into place
        staged = None if image is None else _stage_plot(plot, image)
        plot_failure = None
        try:
            if args.step is None:
                report = private_models.save_models(
                    imports, replace_run=run, allow_limited=args.allow_limited
                )
            else:  # one checkpoint added (or tracked again): the run's others stay
                report = private_models.save_models(
                    imports, replace=True, allow_limited=args.allow_limited
                )
            if staged is not None:
                plot_failure = _place_plot(staged, plot, [i.name for i in imports], run)
                staged = None if plot_failure is None else staged
        finally:
            if staged is not None:
                staged.unlink(missing_ok=True)
        if plot_failure is not None:
            plot = None
        tracked = [
            TrackedCheckpoint(
                step,
                {b: (preds[b].score, preds[b].low, preds[b].high) for b in shown},
                p_all[k] if criteria else None,
                observed=dict(inputs[k].scores),  # the checkpoint's own (probe) scores
            )
            for k, (step, preds) in enumerate(zip(steps, predictions, strict=True))
        ]
        exports, export_lines, failures = _export(
            args, run, _snapshot_pin(bp), tracked, png, ", ".join(str(c) for c in criteria)
        )

    frame = pl.DataFrame(
        [
            {
                "run": run,
                "step": step,
                "model": name,
                "benchmark": b,
                "score": p.score,
                "low": p.low,
                "high": p.high,
                "level": p.level,
                "observed": p.observed,
                "p_all": p_all[k] if criteria else None,
            }
            for k, (step, name, preds) in enumerate(zip(steps, names, predictions, strict=True))
            for b, p in ((b, preds[b]) for b in shown)
        ],
        schema=TRACK_SCHEMA,
    )

    def table() -> None:
        replaced = len(report.replaced)
        again = f", replacing the {replaced} checkpoint(s) tracked before" if replaced else ""
        if args.step is None:
            print(
                f"run {printable(run)}: {len(steps)} checkpoints stored as private models "
                f"{printable(tracking.checkpoint_name(run, steps[0]))} ...{again}"
            )
        else:
            print(
                f"run {printable(run)}: checkpoint {args.step} stored as private model "
                f"{printable(imports[0].name)}{again}; the run has {len(steps)} checkpoints"
            )
        print(
            f"snapshot {bp.version}: predicted scores with {level_label(args.level)} "
            "intervals (observed = the checkpoint's own score)"
        )
        rows = []
        for k, (step, found, preds) in enumerate(zip(steps, inputs, predictions, strict=True)):
            row: dict[str, object] = {"step": step, "probes": len(found.scores)}
            row.update({b: _cell(preds[b]) for b in shown})
            if criteria:
                row["P(all)"] = f"{p_all[k]:.3f}"
            rows.append(row)
        print_table(rows, ["step", "probes", *shown, *(["P(all)"] if criteria else [])])
        print_side(side_used, f"run {printable(run)}")
        unmapped = list(dict.fromkeys(t for found in inputs for t in found.unmapped))
        if unmapped:
            listed = ", ".join(printable(t) for t in unmapped[:12])
            more = f" ... (+{len(unmapped) - 12} more)" if len(unmapped) > 12 else ""
            print(f"unmapped tasks (not used): {listed}{more}; map one with --map TASK=BENCHMARK")
        for line in tracking.ignored_lines(steps, inputs):  # as `predict --from` lists them
            print(printable(line))
        if criteria:
            print()
            print(
                f"P(all) = P({', '.join(str(c) for c in criteria)}), joint over "
                f"{N_DRAWS} predictive draws per checkpoint"
            )
            for line in _noise_lines(noises):
                print(line)
            when = f"step {first}" if first is not None else "none yet"
            print(f"first checkpoint with P >= {tracking.MEET_PROBABILITY:g}: {when}")
        if plot is not None:
            print(f"plot: {printable(plot)}")
        for line in export_lines:
            print(line)

    payload = {
        "run": run,
        "version": bp.version,
        "level": args.level,
        "targets": shown,
        "criteria": [str(c) for c in criteria],
        "side": side_used.as_dict(),
        "replaced": report.replaced,
        "first_step_meeting": first,
        "meet_probability": tracking.MEET_PROBABILITY,
        "plot": None if plot is None else str(plot),
        "checkpoints": [
            {
                "step": step,
                "model": name,
                "files": found.files,
                "probes": found.scores,
                "not_used": tracking.ignored_payload(found),
                "p_all": p_all[k] if criteria else None,
                "p_each": dict(zip(map(str, criteria), p_each[k], strict=True))
                if criteria
                else None,
                # the noise each observed score a criterion is on was taken with
                "measurement_noise": {b: n.as_dict() for b, n in noises[k].items()}
                if criteria
                else None,
                "predictions": [preds[b].as_dict() for b in shown],
            }
            for k, (step, name, found, preds) in enumerate(
                zip(steps, names, inputs, predictions, strict=True)
            )
        ],
        **exports,
    }
    emit(args, frame, payload=payload, table=table)
    for failure in [*([plot_failure] if plot_failure else []), *failures]:
        print(f"benchpress: error: {printable(failure)}", file=sys.stderr)
    return EXIT_FAILED if failures or plot_failure else 0


def _place_plot(staged: Path, plot: Path, stored: list[str], run: str) -> str | None:
    """Move the staged plot to PATH (replacing a regular file there, never writing through a
    symlink). None when done, else the error line, saying exactly what was stored."""
    try:
        if plot.is_symlink() or plot.is_dir():  # put there while we predicted
            raise OSError(f"a {'symbolic link' if plot.is_symlink() else 'folder'} is there")
        os.replace(staged, plot)
    except OSError as exc:
        return (
            f"--plot {plot}: not written ({exc.strerror or exc}); stored nonetheless in run "
            f"{run}: {', '.join(stored)}"
        )
    return None


def _snapshot_pin(bp: BenchPress) -> str:
    """`VERSION@sha256:HEX`, as `--version` takes it: what the trackers record."""
    digest = bp.snapshot.digest
    return f"{bp.version}@{digest}" if digest else bp.version


def _check_trackers(args: argparse.Namespace) -> None:
    """--mlflow/--wandb usable (their extra installed, a sqlite file's folder there) before
    anything is read or written."""
    if args.mlflow is not None:
        track_export.require_mlflow()
        try:
            track_export.check_not_file_store(args.mlflow)
            track_export.sqlite_artifact_location(args.mlflow)
        except ExportError as exc:
            raise CommandError(printable(exc)) from None
    if args.wandb is not None:
        if not args.wandb.strip():
            raise CommandError("--wandb needs a project name")
        track_export.require_wandb()


def _tracker_plot(args: argparse.Namespace, drawing: tuple) -> bytes | None:
    """The PNG the trackers get when --plot gives none; None without --mlflow/--wandb or
    without matplotlib (the `pipeline` extra's: the numbers are logged all the same)."""
    if args.mlflow is None and args.wandb is None:
        return None
    try:
        return _render("png", *drawing)
    except ImportError:
        return None


def _export(
    args: argparse.Namespace,
    run: str,
    pin: str,
    checkpoints: list[TrackedCheckpoint],
    png: bytes | None,
    criteria: str,
) -> tuple[dict[str, Any], list[str], list[str]]:
    """Log the run to --mlflow and --wandb, after the store was written: (the JSON payload's
    entries, the table's lines, the errors). A tracker that fails does not stop the other;
    the command then exits 1, the checkpoints stored."""
    payload: dict[str, Any] = {"snapshot_pin": pin, "mlflow": None, "wandb": None}
    lines, failures = [], []
    logged = (run, pin, args.level, checkpoints, png)
    for key, log in (("mlflow", _to_mlflow), ("wandb", _to_wandb)):
        if getattr(args, key) is None:
            continue
        entry: dict[str, Any] = {}
        try:
            lines.append(log(getattr(args, key), logged, criteria, entry))
        except (ExportError, MissingExtraError) as exc:
            entry["error"] = str(exc)
            failures.append(f"{exc} (the checkpoints are stored; track again to log them)")
        payload[key] = entry
    return payload, lines, failures


def _to_mlflow(uri: str, logged: tuple, criteria: str, entry: dict[str, Any]) -> str:
    """Log to MLflow, filling the payload's `entry`; the table's line."""
    shown = track_export.display_uri(uri)
    entry.update(uri=shown, experiment=track_export.EXPERIMENT)
    entry["run_id"] = track_export.log_to_mlflow(uri, *logged, criteria=criteria)
    run_id, experiment = entry["run_id"], entry["experiment"]
    return f"mlflow: run {run_id} in experiment {experiment} at {printable(shown)}"


def _to_wandb(project: str, logged: tuple, criteria: str, entry: dict[str, Any]) -> str:
    """Log to W&B, filling the payload's `entry`; the table's line."""
    mode = track_export.wandb_mode()
    entry.update(project=project, mode=mode)
    folder = track_export.log_to_wandb(project, *logged, benchpress_home(), criteria=criteria)
    entry["folder"] = str(folder)
    where = printable(folder)
    if mode == "offline":
        return f"wandb: offline run in {where} (upload it: wandb sync {where})"
    return f"wandb: {mode} run in project {printable(project)}, files in {where}"


def _render(fmt, steps, shown, predictions, inputs, run, level, p_all, criteria) -> bytes:
    """The plot's bytes in `fmt` ("png" or "svg"), rendered before the store is written."""
    series = [
        TargetSeries(
            b,
            [p[b].score for p in predictions],
            [p[b].low for p in predictions],
            [p[b].high for p in predictions],
            [p[b].observed for p in predictions],
        )
        for b in shown
    ]
    probes = {
        b: [found.scores.get(b) for found in inputs]
        for b in dict.fromkeys(b for found in inputs for b in found.scores)
    }
    data, _ = render(
        steps,
        series,
        probes,
        fmt,
        title=f"run {run}",
        level=level,
        p_all=p_all if criteria else None,
        criteria=", ".join(str(c) for c in criteria),
    )
    return data
