"""The seeded item subsets of `benchpress run --items N` (`predictor.util.item_subsets`): the
same items on every machine, a larger N extending a smaller one, every task of a group
scored, and a record that refuses being edited."""

from __future__ import annotations

import pytest

from predictor.util.item_subsets import (
    ItemSubset,
    SubsetRecord,
    SubsetRecordError,
    draw,
    fraction_stderr,
    shown_score,
)


def test_the_subset_is_pinned_by_seed_and_task_and_is_no_prefix() -> None:
    # pinned: a change of the ranking would give another run other items than before
    assert draw(ItemSubset(5), {"t": 20}) == {"t": [1, 7, 13, 14, 17]}
    assert draw(ItemSubset(5, seed=1), {"t": 20}) == {"t": [0, 6, 12, 16, 17]}
    assert draw(ItemSubset(5), {"u": 20}) != draw(ItemSubset(5), {"t": 20})
    (chosen,) = draw(ItemSubset(100), {"wide": 240}).values()
    assert len(chosen) == 100 and chosen != list(range(100))  # not --limit's first items
    assert min(chosen) < 10 and max(chosen) > 230
    assert sum(i < 120 for i in chosen) == 53  # spread over the task, not a block of it


def test_a_larger_subset_extends_the_smaller_one() -> None:
    sizes = {"wide": 240}
    smaller, larger = (set(draw(ItemSubset(n), sizes)["wide"]) for n in (100, 150))
    assert len(larger) == 150 and smaller < larger
    # the items of a task do not depend on its size (a task that grew keeps its items)
    grown = set(draw(ItemSubset(100), {"wide": 1000})["wide"])
    assert len(grown & set(range(240))) < 100 and grown != smaller


def test_at_or_above_the_task_size_the_subset_is_the_whole_task() -> None:
    assert draw(ItemSubset(240), {"wide": 240}) is None
    assert draw(ItemSubset(1000), {"wide": 240}) is None
    record = SubsetRecord.drawn(ItemSubset(1000), {"wide": 240})
    assert (record.indices, record.scored, record.total, record.sha256) == (None, 240, 240, None)


def test_every_task_of_a_group_gets_items() -> None:
    sizes = {"a": 10, "b": 2, "c": 1}
    assert draw(ItemSubset(3), sizes) == {"a": [5], "b": [0], "c": [0]}
    assert draw(ItemSubset(6), sizes) == {"a": [2, 3, 5, 9], "b": [0], "c": [0]}
    drawn = [draw(ItemSubset(n), sizes) for n in range(1, 13)]
    assert all(d is None or all(d[t] for t in sizes) for d in drawn)  # each at least once
    for smaller, larger in zip(drawn, drawn[1:], strict=False):  # each N holds the smaller's
        if larger is not None:
            assert all(set(smaller[t]) <= set(larger[t]) for t in sizes)


def test_the_record_round_trips_and_refuses_an_edited_one() -> None:
    record = SubsetRecord.drawn(ItemSubset(5), {"t": 20})
    assert record.as_json() == {
        "seed": 0,
        "items": 5,
        "total": 20,
        "scored": 5,
        "sha256": "3e9d5fbd864ba850e3250b6dca3cbf8873e52b67986724a32a846061f3d633da",
        "indices": {"t": [1, 7, 13, 14, 17]},
    }
    assert SubsetRecord.from_json(record.as_json()) == record
    assert record.provenance() == "seed 0, sha256 3e9d5fbd864b"
    assert record.matches(ItemSubset(5)) and not record.matches(ItemSubset(6))
    edits = {
        "benchpress_subset.sha256": {"indices": {"t": [1, 7, 13, 14, 18]}},
        "benchpress_subset.scored": {"scored": 4},
        "benchpress_subset.indices.t": {"indices": {"t": [7, 1, 13, 14, 17]}},
        "benchpress_subset.total": {"total": -1},
        "benchpress_subset.items": {"items": 0},
    }
    for field, edit in edits.items():
        with pytest.raises(SubsetRecordError) as caught:
            SubsetRecord.from_json({**record.as_json(), **edit})
        assert caught.value.field == field
    with pytest.raises(SubsetRecordError, match="positions must be whole numbers from 0 to 19"):
        SubsetRecord.from_json({**record.as_json(), "indices": {"t": [1, 7, 13, 14, 20]}})


def test_a_subset_score_is_shown_with_its_error_and_its_share_of_the_items() -> None:
    assert shown_score(74.0, 2.1, 200, 12032) == "74.0 ±2.1 (200 of 12,032 items)"
    assert shown_score(62.5, None, 8, 100) == "62.5 (8 of 100 items)"
    assert fraction_stderr(0.69, 100, "fraction") == pytest.approx(0.046249, abs=1e-6)
    assert fraction_stderr(1.0, 30, "fraction") == pytest.approx(0.023373, abs=1e-6)  # not 0
    assert fraction_stderr(0.5, 30, "value") is None and fraction_stderr(0.5, 0, "fraction") is None


def test_a_subset_request_is_checked() -> None:
    assert ItemSubset(100).folder == "items-100"
    assert ItemSubset(100, seed=7).folder == "items-100-seed-7"
    assert ItemSubset(1).describe() == "1 item per task (a seeded random subset, seed 0)"
    for bad in ({"items": 0}, {"items": True}, {"items": 5, "seed": -1}, {"items": 2.5}):
        with pytest.raises(ValueError):
            ItemSubset(**bad)
