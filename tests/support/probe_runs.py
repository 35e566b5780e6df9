"""Probe runs offline: local task definitions the probes run as, and `benchpress run` in a
process of its own.

The probes' public datasets (GPQA, MMLU, AIME, ...) cannot be downloaded here, so the tests
run the task definitions in `tests/fixtures/probe_tasks/` (lm-eval YAMLs over one small
local data file: eight "What is A + B?" items) through the override a team would use for its
own tasks: `BENCHPRESS_PROBE_TASKS` (benchmark=task) and `BENCHPRESS_TASK_INCLUDE_PATH`. They
cover the default runnable probe plans of the bundled snapshot (`ProbeSet.lm_eval` and
`.lm_eval_chat`). The test server (`tests/support/openai_server.py`) answers the items right
except when A + B leaves 1 when divided by 3: 5 of the 8 (62.5%)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.results.fresh_files import offline_env
from tests.support.shared_home import is_machine_setting

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "probe_tasks"
BIN = Path(sys.executable).parent / "benchpress"
RUN_TIMEOUT = 300
# the bundled snapshot's default runnable plans (predictor.trust.probe_sets.PINNED)
LM_EVAL_PROBES = (
    "triviaqa",
    "arc_challenge",
    "aime_2025",
    "mmlu",
    "gpqa_diamond",
    "math",
    "aime_2024",
    "gsm8k",
    "ifeval",
)
CHAT_PROBES = (
    "triviaqa",
    "aime_2025",
    "arc_challenge",
    "gpqa_diamond",
    "math",
    "aime_2024",
    "open_llm_ifeval",
    "bigbench_hard",
    "mmlu_pro",
)
EXPECTED_SCORE = 62.5  # 5 of the 8 items (the module docstring)


def render_tasks(folder: Path) -> Path:
    """The fixture task definitions with their data file's place filled in."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("items.jsonl", "inspect_tasks.py"):
        (folder / name).write_bytes((FIXTURES / name).read_bytes())
    for source in sorted(FIXTURES.glob("*.yaml")):
        text = source.read_text(encoding="utf-8").replace("{data_dir}", str(folder))
        (folder / source.name).write_text(text, encoding="utf-8")
    return folder


def fixture_benchmarks() -> list[str]:
    """Every benchmark with a fixture task (`bp_probe_<benchmark>.yaml`)."""
    return sorted(p.stem.removeprefix("bp_probe_") for p in FIXTURES.glob("bp_probe_*.yaml"))


def task_overrides(benchmarks=None) -> str:
    """`BENCHPRESS_PROBE_TASKS` for the fixture tasks (`bp_probe_<benchmark>`); all of them
    unless `benchmarks` names some."""
    chosen = fixture_benchmarks() if benchmarks is None else benchmarks
    return ",".join(f"{b}=bp_probe_{b}" for b in dict.fromkeys(chosen))


def run_environment(root: Path, tasks: Path, **settings: str) -> dict[str, str]:
    """A `benchpress run` environment: offline, caches and homes in `root`, no BENCHPRESS_*
    setting of the machine, the fixture tasks as the probes' tasks, plus `settings`."""
    env = {k: v for k, v in offline_env(root).items() if not is_machine_setting(k)}
    env.update(
        BENCHPRESS_HOME=str(root / "bphome"),
        BENCHPRESS_PROBE_TASKS=task_overrides(),
        BENCHPRESS_TASK_INCLUDE_PATH=str(tasks),
    )
    env.update(settings)
    return env


def run_cli(
    args: list[str], env: dict[str, str], cwd: Path, timeout: float = RUN_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """`benchpress ARGS` as a user runs it: the installed script in a process of its own."""
    return subprocess.run(
        [str(BIN), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


ENDS = ("model:", "note:", "how these", "to run:", "nothing to run", "read ", "mlflow:", "wandb:")


def table_after(text: str, header: str) -> list[str]:
    """The lines of the table whose header's first columns are the words of `header`, up to a
    blank line or a line that is not a row."""
    words = header.split()
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[: len(words)] == words)
    rows = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.strip() or line.startswith(ENDS):
            break
        rows.append(line)
    return rows
