"""A toy probe-running harness, written as a module of `predictor/harnesses/` is: the class
that runs its tasks and its descriptor, nothing else. Tests register it for a block
(`predictor.harnesses.registered(TOY)`); its tool writes the tidy scores file a real tool's
run would leave (no network, nothing to install)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from predictor.harnesses.base import Harness
from predictor.harnesses.endpoint import Endpoint, SettingsError
from predictor.harnesses.staging import publish, staging_folder, task_folder
from predictor.harnesses.tool import ProbeTool

TOOL = "toy"
# benchmark -> the toy's task, and the score its tool reports for every model
TASKS = {
    "gpqa_diamond": "toy_gpqa",
    "mmlu_pro": "toy_mmlu_pro",
    "mmlu": "toy_mmlu",
    "gsm8k": "toy_gsm8k",
    "hellaswag": "toy_hellaswag",
    "aime_2025": "toy_aime",
}
SCORES = {
    "gpqa_diamond": 61.0,
    "mmlu_pro": 72.5,
    "mmlu": 85.0,
    "gsm8k": 91.0,
    "hellaswag": 88.0,
    "aime_2025": 40.0,
}
RESULTS = "scores.csv"


class ToyTool(ProbeTool):
    """Runs a task by writing the tidy scores file a real tool's run would leave."""

    name = TOOL

    @classmethod
    def check_model_type(cls, model_type: str) -> None:
        if model_type != "echo":
            raise SettingsError(f"the toy harness has no model type {model_type!r}")

    def size(self, task: str) -> tuple[int | None, int | None]:
        return 8, 50

    def finished(self, out: Path, endpoint: Endpoint, task: str, limit: int | None) -> Path | None:
        done = task_folder(out, task) / RESULTS
        return done if done.is_file() else None

    def run(
        self, endpoint: Endpoint, task: str, out: Path, limit: int | None, options: Mapping
    ) -> Path:
        staging = staging_folder(out, task)
        staging.mkdir(parents=True)
        benchmark = next(b for b, t in TASKS.items() if t == task)
        row = f"{endpoint.model},{benchmark},{SCORES[benchmark]}"
        (staging / RESULTS).write_text(f"model,benchmark,score\n{row}\n", encoding="utf-8")
        return publish(staging, RESULTS, out, task)


TOY = Harness(
    id=TOOL,
    name="toy-eval",
    label="ToyEval",
    title="the toy harness",
    package="json",  # importable everywhere: nothing to install
    extra="toy",
    tool=ToyTool,
    model_types=("echo",),
    task_map=TASKS,
)
