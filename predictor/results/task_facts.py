"""What running a tool's task takes, for the plan `benchpress run` prints before the spend.

`facts/tasks.csv` lists, per task of a harness (`tool`: its id, `predictor.harnesses`) the maps
point a benchmark to:
- `output_type`: lm-eval's (`multiple_choice` and `loglikelihood` need prompt log-probs,
  which chat endpoints do not give; `generate_until` works on any endpoint), `generate`
  for Inspect (every Inspect task talks to a chat model);
- `items`: documents in the split the task scores (the public datasets' sizes);
- `shots`: the task's default few-shot examples;
- `tokens_per_item`: an estimate of prompt plus generated tokens per document, few-shot
  examples and every answer choice's request included (our estimate from typical lengths, not
  a measurement; it sizes the bill, it does not predict it);
- `item_pool`: the dataset the task's items are drawn from (`gpqa` for GPQA Diamond, GPQA
  Main and the Open LLM Leaderboard's GPQA, which share questions): two benchmarks whose tasks
  draw from one pool are near-duplicates, and a probe plan runs at most one of them
  (`predictor.trust.probe_plan`).

A task outside the table (a user's own task definition) is sized by loading it, see
`predictor.runs.plan`."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

FACTS_FILE = Path(__file__).parent / "facts" / "tasks.csv"
FACT_COLUMNS = ("tool", "task", "output_type", "items", "shots", "tokens_per_item", "item_pool")
GENERATIVE = frozenset({"generate_until", "generate"})
# Tasks scored by running the code the model wrote: lm-eval marks them `unsafe_code` and
# refuses them unless told to run untrusted code; Inspect's run it in a Docker sandbox. A run
# must not execute a model's code because a probe set chose the task, so probe sets chosen
# for a tool leave them out; one named by the user (`run --probes humaneval`) runs, lm-eval
# told it may (`predictor.harnesses.lm_eval.runs_code`), and lm-eval lines printed for one
# say so (`predictor.results.runnable.next_steps`).
RUNS_MODEL_CODE = frozenset(
    {
        ("lm_eval", "humaneval"),
        ("lm_eval", "humaneval_instruct"),
        ("lm_eval", "humaneval_plus"),
        ("lm_eval", "mbpp"),
        ("lm_eval", "mbpp_instruct"),
        ("lm_eval", "mbpp_plus"),
        ("lm_eval", "mbpp_plus_instruct"),
        ("inspect", "inspect_evals/humaneval"),
        ("inspect", "inspect_evals/mbpp"),
    }
)


@dataclass(frozen=True)
class TaskFacts:
    tool: str
    task: str
    output_type: str
    items: int | None
    shots: int | None
    tokens_per_item: int | None
    item_pool: str = ""  # the dataset its items come from ("": its own)

    @property
    def generative(self) -> bool:
        """True when the task only asks for generations (works on a chat endpoint)."""
        return self.output_type in GENERATIVE


@cache
def load_facts() -> dict[tuple[str, str], TaskFacts]:
    """(tool, task) -> its facts; the table ships with the package and is checked by tests."""
    table: dict[tuple[str, str], TaskFacts] = {}
    with FACTS_FILE.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != FACT_COLUMNS:
            raise ValueError(f"{FACTS_FILE.name}: columns must be {','.join(FACT_COLUMNS)}")
        for number, row in enumerate(reader, start=2):
            # `tool` is a harness id (`predictor.harnesses`; tests/predictor/
            # test_harness_registry.py checks each row names a registered one)
            if not row["tool"] or (row["tool"], row["task"]) in table:
                raise ValueError(f"{FACTS_FILE.name} line {number}: no tool or repeated task")
            table[row["tool"], row["task"]] = TaskFacts(
                row["tool"],
                row["task"],
                row["output_type"],
                *(int(row[c]) if row[c] else None for c in ("items", "shots", "tokens_per_item")),
                row["item_pool"],
            )
    return table


def task_facts(tool: str, task: str) -> TaskFacts | None:
    """The facts of one task, or None for a task the table does not list."""
    return load_facts().get((tool, task))


def runs_model_code(tool: str, task: str) -> bool:
    """True when scoring the task executes code the model wrote (`RUNS_MODEL_CODE`)."""
    return (tool, task) in RUNS_MODEL_CODE


def is_generative(tool: str, task: str) -> bool | None:
    """Whether a task only generates (None: unknown). Every Inspect task does."""
    if tool == "inspect":
        return True
    facts = task_facts(tool, task)
    return None if facts is None else facts.generative
