"""`BENCHPRESS_CALIBRATION_CACHE`: a calibration computed once per distinct input, read back
exactly, and computed again whenever anything it depends on differs."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from predictor.fit import calibration_cache
from predictor.fit.calibration import calibrate_fold_in
from predictor.fit.calibration_cache import (
    CACHE_ENV,
    ENTRY_FORMAT,
    MAX_ENTRY_BYTES,
    CalibrationCacheWarning,
    Unnamed,
    calibration_key,
)
from predictor.methods.bayesian import BayesianCompleter
from predictor.methods.fold_in_calibration import FACTOR_RANGE, FoldInCalibration
from tests.support.shared_home import SUITE_SETTINGS


def noisy_rank2(n: int = 40, m: int = 16, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    logit = rng.normal(0, 0.8, (n, 2)) @ rng.normal(0, 0.8, (2, m)) + rng.normal(0, 0.3, (n, m))
    values = 100.0 / (1.0 + np.exp(-logit))
    return np.where(rng.random((n, m)) < 0.2, np.nan, values)


def small(rank: int = 2) -> BayesianCompleter:
    return BayesianCompleter(rank=rank, n_chains=2, n_burn=5, n_samples=5)


VALUES = noisy_rank2()
SCALES = ["percent"] * VALUES.shape[1]


def calibrate(values: np.ndarray = VALUES, scales: list[str] = SCALES, make=small, **settings):
    return calibrate_fold_in(values, scales, make, **{"n_splits": 3, **settings})


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "calibrations"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    return folder


def counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the calibrations actually computed (the real computation still runs)."""
    calls: list[int] = []
    compute = calibration_cache.cached_calibration

    def spy(inputs, run):
        def counted():
            calls.append(1)
            return run()

        return compute(inputs, counted)

    monkeypatch.setattr("predictor.fit.calibration.cached_calibration", spy)
    return calls


def test_a_second_calibration_of_the_same_fit_is_read_back_exactly(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    computed = counting(monkeypatch)
    first = calibrate()
    assert len(computed) == 1 and len(list(cache.glob("*.json"))) == 1
    again = calibrate(VALUES.copy(), list(SCALES))
    assert len(computed) == 1  # read, not computed
    assert again == first  # every float exactly, not rounded as in a snapshot
    monkeypatch.delenv(CACHE_ENV)
    assert calibrate() == first
    assert len(computed) == 2


def test_anything_the_calibration_depends_on_gives_another_entry(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    computed = counting(monkeypatch)
    calibrate()
    changed = VALUES.copy()
    changed[0, np.flatnonzero(np.isfinite(VALUES[0]))[0]] += 1e-9  # one cell, barely
    calibrate(changed)
    calibrate(make=lambda: small(rank=3))
    calibrate(random_state=1)
    calibrate(n_splits=4)
    calibrate(scales=["unbounded"] + SCALES[1:])
    families = [f"family-{i % 3}" for i in range(VALUES.shape[0])]
    calibrate(fit_kwargs={"row_groups": families})
    assert len(computed) == 7 and len(list(cache.glob("*.json"))) == 7


def test_a_damaged_or_foreign_entry_is_computed_again_and_replaced(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    computed = counting(monkeypatch)
    first = calibrate()
    (entry,) = cache.glob("*.json")
    for damage in (b'{"factors": [[', b"x" * (2 << 20), json.dumps({"factors": [[9.0]]}).encode()):
        entry.write_bytes(damage)
        assert calibrate() == first
        stored = json.loads(entry.read_bytes())["calibration"]
        assert stored["factors"] == [list(r) for r in first.factors]
    assert len(computed) == 4


def test_a_folder_that_cannot_be_written_leaves_the_fit_uncached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "calibrations"))
    computed = counting(monkeypatch)
    first = calibrate()
    assert calibrate() == first
    assert len(computed) == 2


def test_keys_name_plain_values_only() -> None:
    base = {"values": np.arange(3.0), "scales": ["percent"] * 3}
    assert calibration_key(**base) == calibration_key(**base)
    assert calibration_key(**base) != calibration_key(**{**base, "values": np.arange(3)})
    assert calibration_key(**base) != calibration_key(**{**base, "scales": ["unbounded"] * 3})
    assert calibration_key(a=1) != calibration_key(a=True) != calibration_key(a=1.0)
    with pytest.raises(Unnamed):
        calibration_key(method=object())


def test_the_suite_keeps_its_cache_setting_in_every_test_environment() -> None:
    assert CACHE_ENV in SUITE_SETTINGS


# ------------------------------------------------------------ issue 38: a planted entry
def _doubled(first: FoldInCalibration) -> dict[str, object]:
    """`first` with every factor doubled (within the allowed range, as the planted entry of
    the red team was) and enough residuals claimed behind each."""
    stored = dataclasses.asdict(first)
    stored.pop("cache_key")
    stored["factors"] = [[min(2 * f, FACTOR_RANGE[1]) for f in row] for row in first.factors]
    return stored


def test_a_planted_entry_is_not_used(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    computed = counting(monkeypatch)
    first = calibrate()
    (entry,) = cache.glob("*.json")
    key = entry.stem
    doubled = _doubled(first)
    many = {**doubled, "residuals": [10_000] * len(first.residuals)}
    planted = {
        # the red team's entry: the calibration's own fields, doubled (no key)
        "old format": json.dumps(doubled).encode(),
        "another key": json.dumps(
            {"format": ENTRY_FORMAT, "key": "0" * 64, "calibration": many}
        ).encode(),
        "factors without residuals": json.dumps(
            {"format": ENTRY_FORMAT, "key": key, "calibration": doubled}
        ).encode(),
        "too large": json.dumps(doubled).encode() + b" " * (MAX_ENTRY_BYTES + 1),
        "other levels": json.dumps(
            {"format": ENTRY_FORMAT, "key": key, "calibration": {**many, "levels": [0.9] * 9}}
        ).encode(),
    }
    for label, document in planted.items():
        entry.write_bytes(document)
        assert calibrate() == first, label
        assert calibrate().factors == first.factors, label
        assert json.loads(entry.read_bytes())["key"] == key, label  # computed and replaced
    assert len(computed) == 1 + len(planted)
    # the one entry used is the one that names its key and checks out; the fit says it was
    entry.write_bytes(
        json.dumps({"format": ENTRY_FORMAT, "key": key, "calibration": many}).encode()
    )
    entry.chmod(0o644)
    used = calibrate()
    assert used.cache_key == key and used.factors != first.factors
    # ... unless others may write to it
    entry.chmod(0o666)
    assert calibrate() == first
    assert len(computed) == 2 + len(planted)


@pytest.mark.parametrize("mode", [0o777, 0o770])
def test_a_folder_others_can_write_to_is_refused_with_a_warning(
    cache: Path, monkeypatch: pytest.MonkeyPatch, mode: int
) -> None:
    computed = counting(monkeypatch)
    first = calibrate()
    assert first.cache_key is None  # computed
    (entry,) = cache.glob("*.json")
    assert oct(cache.stat().st_mode & 0o777) == "0o700"  # created private
    entry.write_bytes(
        json.dumps(
            {"format": ENTRY_FORMAT, "key": entry.stem, "calibration": _doubled(first)}
        ).encode()
    )
    cache.chmod(mode)
    who = "group and others" if mode == 0o777 else "group"
    with pytest.warns(CalibrationCacheWarning) as caught:
        again = calibrate()
    assert [str(w.message) for w in caught] == [
        f"{CACHE_ENV} folder {cache} is not used: it is writable by {who} (mode {mode:o}; make "
        f"it private: chmod go-w {cache}); the calibration is computed"
    ]
    assert again == first and again.cache_key is None
    assert len(computed) == 2
