"""Run a model's probe benchmarks with lm-evaluation-harness or Inspect, then predict from
the scores: `run_probe_benchmarks` (the API) and `benchpress run` (the command).

Names are imported when first used, so `benchpress probes` reads the settings module
without loading the runner."""

from __future__ import annotations

from predictor.util.lazy import lazy_exports

_EXPORTS = {
    "EndpointError": "predictor.runs.preflight",
    "ProbeScores": "predictor.runs.runner",
    "RunPlan": "predictor.runs.plan",
    "SettingsError": "predictor.harnesses.endpoint",
    "plan_probe_run": "predictor.runs.runner",
    "run_probe_benchmarks": "predictor.runs.runner",
}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
