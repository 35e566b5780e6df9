"""The same inputs publish the same snapshot on any CPU: a fit's last bits follow the BLAS
kernels OpenBLAS picks for the CPU (and its thread count), so a snapshot is named by its inputs
(`predictor.snapshots.input_identity`: data files, fit parameters, format, method), not by the
fit's bytes. Each fit here runs in a process of its own with `OPENBLAS_CORETYPE` and
`OPENBLAS_NUM_THREADS` set before NumPy is imported."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from predictor.paths import bundled_snapshot_dir
from predictor.snapshots import list_versions, read_manifest, snapshot_identity
from warehouse.snapshots import publish, stage

pytestmark = pytest.mark.slow

# the instruction set a forced core type needs beyond x86-64's: a CPU without it dies of SIGILL
# there (a machine without AVX-512 cannot run SkylakeX kernels; Prescott runs anywhere)
NEEDS = {"Haswell": "avx2", "SkylakeX": "avx512f"}


def cpu_flags() -> set[str]:
    """The CPU's feature flags (empty where /proc/cpuinfo is not readable)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    return {f for line in text.splitlines() if line.startswith("flags") for f in line.split()}


_FLAGS = cpu_flags()
KERNELS = [
    (core, threads)
    for core in ("Haswell", "SkylakeX", "Prescott")
    if not _FLAGS or core not in NEEDS or NEEDS[core] in _FLAGS
    for threads in (1, 2)
]

# stage BenchPress.fit's snapshot of the paper matrix and publish it into a shared store
DRIVER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path

    from predictor.api import BenchPress
    from predictor.evaluation import DEFAULT_MATRIX_PATH, paper_scores_frame
    from predictor.snapshot_writer import SnapshotTables
    from predictor.snapshots import sha256_file
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
        "OPENBLAS_CORETYPE": core,
        "OPENBLAS_NUM_THREADS": str(threads),
        "OMP_NUM_THREADS": str(threads),
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
    store = tmp_path / "store"
    runs = {
        (core, threads): fit_and_publish(tmp_path, store, core, threads)
        for core, threads in KERNELS
    }
    first = runs[KERNELS[0]]
    assert first["published"]
    # the kernels do change the fit's bytes (three core types, three fits on this CPU kind)
    assert len({run["fit_sha256"] for run in runs.values()}) > 1
    # every other kernel reproduces the inputs: nothing new is published, same version and pin
    for kernel, run in runs.items():
        assert (run["version"], run["digest"]) == (first["version"], first["digest"]), kernel
        assert run["published"] is (kernel == KERNELS[0]), kernel
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
    from predictor.snapshot_layout import draft_manifest
    from predictor.snapshot_writer import write_manifest
    from predictor.snapshots import content_hash, sha256_file

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
    from predictor.snapshots import fitted_method, input_identity

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
