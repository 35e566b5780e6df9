"""Probes (or targets) on benchmarks that exist, but not in the snapshot being used.

A snapshot holds the benchmarks its sources scored: the BenchPress paper matrix
(`microsoft/benchpress-v1`) has no `mmlu`, `arc_challenge` or `hellaswag`, which the main
bundled snapshot has. A probe named like that is not a typo, so it is not an unknown name;
`handle_missing` says what happens to it:

- `"interpolate"` (default): it is left out with a `MissingProbesWarning` naming it, and the
  prediction uses the other probes (the missing benchmark is not filled in from the model:
  a snapshot's fit can only use its own benchmarks).
- `"error"`: `MissingProbesError` lists the missing probes and this snapshot's default probes
  (`predictor.probe_sets`) that were not given.

"Exists" means: known to any snapshot bundled with the package (their benchmark ids, the
sources' spellings in their alias tables and the display names). A name known nowhere is an
`UnknownNameError` with close matches whatever `handle_missing` says, as before. A benchmark
the snapshot has but could not fit (too few scores) stays the usual `ProbeScoreError`.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Mapping, Sequence

import polars as pl

from predictor.names.resolve import (
    AmbiguousNameError,
    NameResolver,
    UnknownNameError,
    display_names,
)
from predictor.snapshots.pretrained import PRETRAINED, pretrained_root
from predictor.snapshots.reader import list_versions
from predictor.trust.probe_sets import ProbeBenchmarks
from predictor.trust.profiles import profile_name
from predictor.util.paths import bundled_snapshot_dir
from predictor.values import ProbeScoreError

HANDLE_MISSING = ("interpolate", "error")


class MissingBenchmarksWarning(UserWarning):
    """Benchmarks the snapshot does not have were left out (probes or targets)."""


class MissingProbesWarning(MissingBenchmarksWarning):
    """Probe scores on benchmarks the snapshot does not have were left out of a prediction."""


class MissingProbesError(ProbeScoreError):
    """Probes on benchmarks the snapshot does not have, with `handle_missing="error"` (or
    when no probe is left). A usage error (CLI exit 2), like every `ProbeScoreError`.

    `missing`: the names as given; `default_not_given`: this snapshot's default probes the
    caller did not give (empty when the snapshot has no pinned probe sets)."""

    def __init__(self, message: str, missing: list[str], default_not_given: list[str]):
        super().__init__(message)
        self.missing, self.default_not_given = missing, default_not_given


def check_handle_missing(handle_missing: str) -> str:
    if handle_missing not in HANDLE_MISSING:
        raise ValueError(
            f"handle_missing must be one of {', '.join(map(repr, HANDLE_MISSING))}, got "
            f"{handle_missing!r}"
        )
    return handle_missing


def _bundled_dirs() -> list:
    main = bundled_snapshot_dir()
    dirs = [main / v for v in list_versions(main)]
    dirs += [pretrained_root() / e.directory for e in PRETRAINED.values()]
    return [d for d in dirs if (d / "benchmarks.parquet").is_file()]


@functools.lru_cache(maxsize=1)
def known_benchmarks() -> NameResolver:
    """A resolver over every benchmark any bundled snapshot holds (package data only: the
    predictor never reads the pipeline's registry)."""
    tables, aliases = [], []
    for directory in _bundled_dirs():
        tables.append(
            pl.read_parquet(directory / "benchmarks.parquet", columns=["benchmark_id", "name"])
        )
        frame = pl.read_parquet(directory / "aliases.parquet")
        aliases.append(frame.filter(pl.col("kind") == "benchmark").select("kind", "name", "id"))
    if not tables:
        empty = pl.DataFrame(schema={"kind": pl.String, "name": pl.String, "id": pl.String})
        return NameResolver("benchmark", [], empty)
    benchmarks = pl.concat(tables).unique("benchmark_id", keep="first").sort("benchmark_id")
    return NameResolver(
        "benchmark",
        benchmarks["benchmark_id"].to_list(),
        pl.concat(aliases).unique(),
        display_names(benchmarks, "benchmark_id"),
    )


def _lacking(bp, name: str) -> str | None:
    """The known id of `name` when `bp` lacks it; None when `bp` has it. A name known
    nowhere raises the snapshot's own `UnknownNameError` (with the registry's close matches
    when the snapshot has none)."""
    try:
        bp.resolve_benchmark(name)
        return None
    except AmbiguousNameError:
        raise
    except UnknownNameError as here:
        try:
            return known_benchmarks()(name)
        except AmbiguousNameError:
            raise here from None
        except UnknownNameError as anywhere:
            if here.suggestions or not anywhere.suggestions:
                raise here from None
            raise UnknownNameError("benchmark", name, anywhere.suggestions) from None


def _shown(name: str, benchmark: str) -> str:
    return name if name == benchmark else f"{name} ({benchmark})"


def _default_not_given(bp, given: Sequence[str]) -> list[str] | None:
    """This snapshot's default probes not among `given` ids; None when it has no pinned set."""
    sets = ProbeBenchmarks.pinned(bp)
    return None if sets is None else [b for b in sets.default if b not in set(given)]


def split_probes(
    bp, probe_scores: Mapping[str, float], handle_missing: str = "interpolate"
) -> dict[str, float]:
    """The probe scores `bp` can use: `probe_scores` without those on benchmarks it lacks
    (module docstring). Names are kept as given (`predict` resolves and checks them);
    anything that is not a mapping comes back as is, for `predict` to reject."""
    check_handle_missing(handle_missing)
    if not isinstance(probe_scores, Mapping):
        return probe_scores
    kept: dict[str, float] = {}
    missing: list[tuple[str, str]] = []
    for name, score in probe_scores.items():
        known = _lacking(bp, name) if isinstance(name, str) and name.strip() else None
        if known is None:
            kept[name] = score
        else:
            missing.append((name, known))
    if not missing:
        return kept
    shown = ", ".join(_shown(n, b) for n, b in missing)
    lacks = f"snapshot {bp.version} has no benchmark {shown}"
    if handle_missing == "error" or not kept:
        given = [bp.resolve_benchmark(n) for n in kept]
        defaults = _default_not_given(bp, given)
        if defaults is None:
            hint = "bp.select_probes() says which probes suit it"
        else:
            hint = f"its default probes not given: {', '.join(defaults) or 'none'}"
        why = "" if kept else " and no other probe was given"
        choice = "" if not kept else "; handle_missing='interpolate' predicts from the others"
        raise MissingProbesError(
            f"{lacks}{why}; {hint}{choice}",
            [n for n, _ in missing],
            defaults or [],
        )
    warnings.warn(
        f"{lacks}: left out of the probes; predicting from the other {len(kept)} "
        f"({', '.join(kept)}); handle_missing='error' refuses instead",
        MissingProbesWarning,
        stacklevel=3,
    )
    return kept


def split_targets(bp, targets, handle_missing: str = "interpolate"):
    """`targets` (a profile, "all", None, a name or a list of names) without the benchmarks
    `bp` lacks: left out with a `MissingBenchmarksWarning`, or with `"error"` a ValueError
    naming them. Profiles, "all" and None come back as they are (a profile keeps only the
    snapshot's benchmarks already)."""
    check_handle_missing(handle_missing)
    if (
        targets is None
        or isinstance(targets, str)
        and (targets.strip().lower() == "all" or profile_name(targets) is not None)
    ):
        return targets
    names = [targets] if isinstance(targets, str) else list(targets)
    kept, missing = [], []
    for name in names:
        known = _lacking(bp, name) if isinstance(name, str) and name.strip() else None
        (kept if known is None else missing).append(name if known is None else (name, known))
    if not missing:
        return targets
    shown = ", ".join(_shown(n, b) for n, b in missing)
    lacks = f"snapshot {bp.version} has no benchmark {shown}"
    if handle_missing == "error" or not kept:
        why = "" if kept else " and no other target was given"
        raise ValueError(f"targets: {lacks}{why}")
    warnings.warn(
        f"targets: {lacks}: left out; comparing on {', '.join(kept)}",
        MissingBenchmarksWarning,
        stacklevel=4,  # the caller of BenchPress.compare_models
    )
    return kept
