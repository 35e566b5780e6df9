"""Each source's test declares where the fault suite's content faults go (`FAULT_TARGET`), so
adding a source touches no file of the fault suite; a source without one is refused, naming the
test file to declare it in (issue 39)."""

from __future__ import annotations

import sys
import types

import pytest

from pipelines.sources import SOURCES
from tests.faults.faults import TARGETS, declared_target
from tests.support.fault_edits import Target


def test_every_registered_source_has_its_declared_target() -> None:
    assert set(TARGETS) == set(SOURCES)
    assert all(isinstance(target, Target) for target in TARGETS.values())


def test_a_source_without_a_test_file_is_refused_naming_the_file() -> None:
    with pytest.raises(AssertionError, match="'toy_board' has no FAULT_TARGET") as raised:
        declared_target("toy_board")
    assert str(raised.value).endswith("in tests/sources/test_toy_board.py")


def test_a_test_file_without_fault_target_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    bare = types.ModuleType("tests.sources.test_toy_board")  # a test file that forgot it
    monkeypatch.setitem(sys.modules, bare.__name__, bare)
    with pytest.raises(AssertionError, match="every source needs its content mutations"):
        declared_target("toy_board")
    bare.FAULT_TARGET = ("https://toy.example/board.json", None)  # not a Target
    with pytest.raises(AssertionError, match=r"declare `FAULT_TARGET = Target\(url, edit, what\)`"):
        declared_target("toy_board")
