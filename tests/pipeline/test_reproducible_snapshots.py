"""The same inputs publish the same snapshot on any CPU: a fit's last bits follow the BLAS
kernels OpenBLAS picks for the CPU (and its thread count), so a snapshot is named by its inputs
(`predictor.snapshots.input_identity`: data files, fit parameters, format, method), not by the
fit's bytes. Each fit here runs in a process of its own with `OPENBLAS_CORETYPE` and
`OPENBLAS_NUM_THREADS` set before NumPy is imported."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from predictor.snapshots.reader import list_versions, read_manifest, snapshot_identity
from predictor.util.paths import bundled_snapshot_dir
from warehouse.snapshots import publish, stage

pytestmark = pytest.mark.slow

# The kernel sets a fit runs under: OpenBLAS's own pick for this CPU (no OPENBLAS_CORETYPE),
# then core types forced in turn, kept when the CPU has the instructions they need (the same
# /proc/cpuinfo flags on Intel and AMD; a CPU without AVX-512 dies of SIGILL under SkylakeX
# kernels) and a probe process running them reports a kernel set not seen yet (OpenBLAS falls
# back to its own pick for a core type it does not know or was not built with).
DEFAULT = "default"  # no OPENBLAS_CORETYPE: the kernels OpenBLAS picks for the CPU
CORE_TYPES = ("Haswell", "SkylakeX", "Prescott", "Sandybridge")
NEEDS = {
    "Haswell": {"avx2", "fma"},
    "SkylakeX": {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"},
    "Prescott": {"pni"},  # SSE3, as Linux names it
    "Sandybridge": {"avx"},
}
WANTED = 3  # kernel sets at most, each fitted with one and with two threads
# the kernels a process runs: a product runs them (a CPU without their instructions dies
# there), then OpenBLAS names them (`openblas_get_corename`, through threadpoolctl)
PROBE = textwrap.dedent(
    """
    import os
    import numpy as np
    a = np.ones((64, 64))
    a @ a
    try:
        import threadpoolctl
    except ImportError:  # the forced name stands for the kernels
        print(os.environ.get("OPENBLAS_CORETYPE", "default"))
    else:
        info = threadpoolctl.threadpool_info()
        print(*[i.get("architecture") for i in info if i.get("internal_api") == "openblas"])
    """
)


def cpu_flags() -> set[str]:
    """The CPU's feature flags (empty where /proc/cpuinfo is not readable)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    return {f for line in text.splitlines() if line.startswith("flags") for f in line.split()}


def blas_env(core: str, threads: int) -> dict[str, str]:
    """OpenBLAS's settings for a process: `core` forced unless DEFAULT, `threads` threads."""
    env = {"OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    if core != DEFAULT:
        env["OPENBLAS_CORETYPE"] = core
    return env


def no_core_dump() -> None:
    """A probe that dies of SIGILL leaves no core file behind."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def kernel_set(core: str) -> str | None:
    """The kernel set OpenBLAS reports running under `core` (None: the probe died)."""
    env = {"PATH": "/usr/bin:/bin", **blas_env(core, 1)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=no_core_dump,
    )
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def runnable_cores(flags: set[str]) -> list[str]:
    """Up to WANTED core types giving distinct kernel sets this CPU runs, OpenBLAS's own first
    (unknown flags: every core type is probed, a probe's SIGILL rules one out)."""
    cores, seen = [], set()
    for core in (DEFAULT, *CORE_TYPES):
        if core != DEFAULT and flags and not NEEDS[core] <= flags:
            continue
        found = kernel_set(core)
        if found is not None and found not in seen:
            cores.append(core)
            seen.add(found)
        if len(cores) == WANTED:
            break
    return cores


# stage BenchPress.fit's snapshot of the paper matrix and publish it into a shared store
DRIVER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path

    from predictor.api import BenchPress
    from predictor.evaluation.protocols import DEFAULT_MATRIX_PATH, paper_scores_frame
    from predictor.snapshots.writer import SnapshotTables
    from predictor.snapshots.reader import sha256_file
    from warehouse.snapshots import publish, stage

    root, store = Path(sys.argv[1]), Path(sys.argv[2])
    bp = BenchPress.fit(paper_scores_frame(DEFAULT_MATRIX_PATH), n_chains=2, n_samples=8)
    s = bp.snapshot
    tables = SnapshotTables(s.cells, s.models, s.benchmarks, s.aliases, s.conflicts, s.fit)
    facts = {"fit_params": dict(s.manifest.get("fit_params") or {})}
    digest, staged = stage(tables, root / "staging", facts)
    result = publish(staged, store, elsewhere=[])
    print(json.dumps({
        "version": result.version,
        "published": result.published,
        "digest": result.digest,
        "fit_sha256": sha256_file(staged / "fit.json"),
    }))
    """
)


def fit_and_publish(root: Path, store: Path, core: str, threads: int) -> dict:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(root),
        **blas_env(core, threads),
        "BENCHPRESS_HOME": str(root / "home"),
    }
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(root / f"{core}-{threads}"), str(store)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, (core, threads, done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_fits_under_every_blas_kernel_publish_one_version(tmp_path: Path) -> None:
    cores = runnable_cores(cpu_flags())
    if len(cores) < 2:
        pytest.skip(f"OpenBLAS runs one kernel set on this CPU ({cores}); the test needs two")
    kernels = [(core, threads) for core in cores for threads in (1, 2)]
    store = tmp_path / "store"
    runs = {
        (core, threads): fit_and_publish(tmp_path, store, core, threads)
        for core, threads in kernels
    }
    first = runs[kernels[0]]
    assert first["published"]
    # the kernels do change the fit's bytes (three core types, three fits on this CPU kind)
    assert len({run["fit_sha256"] for run in runs.values()}) > 1
    # every other kernel reproduces the inputs: nothing new is published, same version and pin
    for kernel, run in runs.items():
        assert (run["version"], run["digest"]) == (first["version"], first["digest"]), kernel
        assert run["published"] is (kernel == kernels[0]), kernel
    assert list_versions(store) == [first["version"]]


def test_the_replay_inputs_publish_the_bundled_snapshot_as_shipped(tmp_path: Path) -> None:
    """A staged snapshot with the bundled one's data and parameters but a fit whose last bits
    differ (another CPU) publishes the bundled version, byte for byte."""
    (version,) = list_versions(bundled_snapshot_dir())
    shipped = bundled_snapshot_dir() / version
    staged = tmp_path / "staged"
    staged.mkdir()
    manifest = read_manifest(shipped)
    for name in manifest["files"]:
        (staged / name).write_bytes((shipped / name).read_bytes())
    fit = json.loads((staged / "fit.json").read_text())
    fit["state"]["new_model_noise"] += 1e-12  # the last bits of another CPU's fit
    (staged / "fit.json").write_text(json.dumps(fit))
    from predictor.snapshots.layout import draft_manifest
    from predictor.snapshots.reader import content_hash, sha256_file
    from predictor.snapshots.writer import write_manifest

    hashes = {name: sha256_file(staged / name) for name in manifest["files"]}
    facts = {k: manifest[k] for k in ("counts", "fit_params", "quality") if k in manifest}
    write_manifest(staged, draft_manifest(hashes, content_hash(hashes), facts))
    assert hashes["fit.json"] != manifest["files"]["fit.json"]
    assert snapshot_identity(staged) == snapshot_identity(shipped)

    store = tmp_path / "home" / "snapshots"
    result = publish(staged, store)
    assert (result.version, result.published) == (version, True)
    for name in ["manifest.json", "digest", *manifest["files"]]:
        assert (store / version / name).read_bytes() == (shipped / name).read_bytes(), name
    again = publish(staged, store)
    assert (again.version, again.published, again.digest) == (version, False, result.digest)


def test_other_inputs_publish_a_new_version(tmp_path: Path) -> None:
    (version,) = list_versions(bundled_snapshot_dir())
    shipped = bundled_snapshot_dir() / version
    manifest = read_manifest(shipped)
    changed = dict(manifest, fit_params={**manifest["fit_params"], "rank": 3})
    from predictor.snapshots.reader import fitted_method, input_identity

    method = fitted_method(shipped)
    assert method == "bayes@5"
    assert input_identity(changed, method) != input_identity(manifest, method)
    assert input_identity(manifest, "als@1") != input_identity(manifest, method)
    assert stage  # the staging used by the driver above


def test_other_method_settings_publish_a_new_version(tmp_path: Path) -> None:
    """A fit with another hyperparameter (a changed default, say) is not the shipped snapshot,
    even though the data files, fit parameters and method version are the same: the bundle is
    refitted, not reproduced, after such a change."""
    (version,) = list_versions(bundled_snapshot_dir())
    shipped = bundled_snapshot_dir() / version
    staged = tmp_path / "staged"
    staged.mkdir()
    for name in read_manifest(shipped)["files"]:
        (staged / name).write_bytes((shipped / name).read_bytes())
    (staged / "manifest.json").write_bytes((shipped / "manifest.json").read_bytes())
    assert snapshot_identity(staged) == snapshot_identity(shipped)
    fit = json.loads((staged / "fit.json").read_text())
    assert fit["state"]["params"]["n_keep"] == 40
    fit["state"]["params"]["n_keep"] = 80
    (staged / "fit.json").write_text(json.dumps(fit))
    assert snapshot_identity(staged) != snapshot_identity(shipped)
