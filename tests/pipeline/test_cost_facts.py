"""Run costs published by the leaderboards become the snapshot's cost facts."""

from __future__ import annotations

import json

import polars as pl
import pytest

from pipelines.stages.costs import run_cost_facts
from predictor import BenchPress
from predictor.trust.costs import cost_from_usd, default_cost, resolve_costs
from predictor.trust.next_benchmark import benchmark_costs
from predictor.util.paths import bundled_snapshot_dir


def row(source: str, benchmark: str | None, extra: dict | str | None, resolved: bool = True):
    return {
        "source": source,
        "benchmark_id": benchmark,
        "resolution": "resolved" if resolved else "unresolved_model",
        "extra": extra if extra is None or isinstance(extra, str) else json.dumps(extra),
    }


def test_median_usd_per_run_per_benchmark_from_each_sources_fact() -> None:
    normalized = pl.DataFrame(
        [
            row("aider", "aider_polyglot_diff", {"cost": 10.0}),
            row("aider", "aider_polyglot_diff", {"cost": 30.0}),
            row("aider", "aider_polyglot_diff", {"cost": 20.0}),
            row("aider", "aider_polyglot_diff", {"cost": 0.0}),  # free / unknown: left out
            row("aider", "aider_polyglot_diff", {"cost": 999.0}, resolved=False),
            row("aider", "aider_polyglot_diff", '{"cost": "-"}'),  # not a number
            row("swebench", "swe_bench_verified", {"cost": 360.62, "instance_cost": 0.72}),
            row("arc_prize", "arc_agi_1", {"cost_per_task": 0.25, "cost": None}),  # x 100 tasks
            row("arc_prize", "arc_agi_3", {"cost_per_task": None, "cost": 8866.2}),
            row("arc_prize", "arc_agi_9", {"cost_per_task": 1.0}),  # unknown task count
            row("livebench", "livebench_math", {"cost": 5.0}),  # not a run-cost source
            row("aider", None, {"cost": 3.0}),
        ]
    )
    facts = run_cost_facts(normalized)
    assert facts.to_dicts() == [
        {"benchmark_id": "aider_polyglot_diff", "run_cost_usd": 20.0, "run_cost_reports": 3},
        {"benchmark_id": "arc_agi_1", "run_cost_usd": 25.0, "run_cost_reports": 1},
        {"benchmark_id": "arc_agi_3", "run_cost_usd": 8866.2, "run_cost_reports": 1},
        {"benchmark_id": "swe_bench_verified", "run_cost_usd": 360.62, "run_cost_reports": 1},
    ]
    assert run_cost_facts(normalized.head(0)).columns == facts.columns


def test_source_facts_decide_the_cost_before_the_defaults() -> None:
    assert cost_from_usd(20.0) == 2.0
    assert cost_from_usd(0.01) == 0.25 and cost_from_usd(1e6) == 50.0
    names = ["aider_polyglot_diff", "mmlu_pro", "swe_bench_verified"]
    costs = resolve_costs(names, run_cost_usd={"aider_polyglot_diff": 20.0, "mmlu_pro": None})
    assert costs.tolist() == [2.0, 1.0, default_cost("swe_bench_verified")]
    overridden = resolve_costs(names, {"aider_polyglot_diff": 7.0}, run_cost_usd={"x": 1.0})
    assert overridden[0] == 7.0  # an explicit cost beats the facts


def test_bundled_snapshot_carries_the_facts_and_probe_costs_use_them() -> None:
    bp = BenchPress.load(store=bundled_snapshot_dir())
    table = bp.snapshot.benchmarks
    facts = dict(table.select("benchmark_id", "run_cost_usd").drop_nulls().iter_rows())
    assert facts["aider_polyglot_diff"] == pytest.approx(13.7517)
    assert facts["swe_bench_verified_bash_only"] == pytest.approx(150.836, abs=1e-3)
    cost = dict(zip(bp.fit_benchmarks_, benchmark_costs(bp).tolist(), strict=True))
    assert cost["aider_polyglot_diff"] == pytest.approx(1.37517)
    assert cost["swe_bench_verified_bash_only"] == pytest.approx(15.0836, abs=1e-4)
    assert cost["mmlu_pro"] == 1.0  # no facts: the documented default
