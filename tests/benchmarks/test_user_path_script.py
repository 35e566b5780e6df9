"""`benchmarks/user_path.py`, shared with `paper_protocol.py --user-path`: which models the
5-probe protocol leaves out, and how the figures are summarised and printed."""

from __future__ import annotations

import numpy as np

from benchmarks.paper_protocol import format_user_path
from benchmarks.user_path import left_out_models, summarise


def test_only_models_with_a_probe_and_a_hidden_cell_are_left_out() -> None:
    nan = np.nan
    values = np.array(
        [
            [50.0, 60.0, 70.0],  # probe 0 given, cells 1-2 hidden: left out
            [nan, 60.0, 70.0],  # no probe score: skipped
            [50.0, nan, nan],  # nothing to hide: skipped
            [nan, 60.0, nan],  # no probe: skipped
            [55.0, nan, 80.0],  # left out
        ]
    )
    assert left_out_models(values, probes=[0]) == [0, 4]
    assert left_out_models(values, probes=[0], quick=True) == [0, 4]  # every 4th: 0 and 4
    assert left_out_models(values, probes=[0, 1]) == [0, 1, 4]


def test_figures_are_the_mean_of_each_seeds_median() -> None:
    runs = [([1.0, 2.0, 9.0], 10.0), ([3.0, 4.0, 5.0], 20.0)]
    figures = summarise(runs)
    assert figures == {
        "medae_hidden": 3.0,
        "medae_by_seed": [2.0, 4.0],
        "n_hidden": 3,
        "seconds": 15.0,
    }
    text = format_user_path(
        {"models": 84, "seeds": [0, 1], "named": figures, "no_name_or_date": summarise(runs[:1])}
    ).splitlines()
    assert text[0].startswith("5-probe protocol through BenchPress.fit + predict (84 models")
    assert text[1].split() == [
        "with",
        "the",
        "model's",
        "name",
        "and",
        "date",
        "3.00",
        "(2.00,",
        "4.00;",
        "3",
        "cells)",
    ]
    assert text[2].split() == ["without", "2.00", "(2.00;", "3", "cells)"]
