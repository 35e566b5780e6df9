"""From a benchmark of ours to the task that runs it: lm-eval and Inspect task names, and
ready command lines whose results files `benchpress predict --from` reads back.

The map tables (`maps/lm_eval.csv`, `maps/inspect.csv`) say which tool task scores which
benchmark; read in reverse they say what to run. A benchmark several tasks map onto gets one,
chosen deterministically, by the first rule that tells them apart:
0. the reviewed choice in `CLOSEST_SETUP` (the task whose setup is nearest to how most of the
   matrix's scores were made, where the table offers several);
1. a task the table notes as the exact setup of the matrix's scores ("same harness and task
   as ...", e.g. lm-eval's `leaderboard_*` tasks for the Open LLM Leaderboard's scores);
2. for Inspect, a registry name (`inspect_evals/gpqa_diamond`) before a bare one;
3. the task named as the benchmark itself (`mmlu_pro` for mmlu_pro);
4. the table's order."""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

from predictor.results.mapping import load_map
from predictor.results.task_facts import is_generative, runs_model_code

RESULTS_DIR = "results/"  # where the commands write, and `predict --from` reads
LM_EVAL_MODEL = "pretrained=YOUR_MODEL"
LM_EVAL_CHAT_MODEL = "model=YOUR_MODEL,base_url=YOUR_ENDPOINT"
INSPECT_MODEL = "PROVIDER/MODEL"
# a task scored by running the model's code (HumanEval, MBPP) runs only when lm-eval is told
# to run untrusted code, and its `code_eval` metric only with this variable set
LM_EVAL_UNSAFE = "--confirm_run_unsafe_code"
CODE_EVAL_VARIABLE = "HF_ALLOW_CODE_EVAL=1"


EXACT_NOTE = "same harness and task as"  # how the tables mark the matrix's own setup
# format -> benchmark -> task: most GPQA Diamond and GSM8K cells are vendor figures from a
# generative chain-of-thought run (0-shot for GPQA, 8-shot for GSM8K), not log-likelihood
CLOSEST_SETUP = {
    "lm_eval": {"gpqa_diamond": "gpqa_diamond_cot_zeroshot", "gsm8k": "gsm8k_cot"},
    "inspect": {},
}


@cache
def preferred_tasks(fmt: str, generative_only: bool = False) -> dict[str, str]:
    """benchmark_id -> the task of format `fmt` (`lm_eval`, `inspect`) that runs it;
    `generative_only`: among the tasks that only generate (what a chat endpoint can run)."""
    ranked: dict[str, tuple[tuple[bool, bool, bool, bool, int], str]] = {}
    for order, (task, entries) in enumerate(load_map(fmt).items()):
        if generative_only and not is_generative(fmt, task):
            continue
        for entry in entries:
            if not entry.benchmark_id:  # listed as measuring none of our benchmarks
                continue
            key = (
                CLOSEST_SETUP.get(fmt, {}).get(entry.benchmark_id) != task,
                not entry.note.lower().startswith(EXACT_NOTE),
                fmt == "inspect" and "/" not in task,
                task.rpartition("/")[2] != entry.benchmark_id,
                order,
            )
            best = ranked.get(entry.benchmark_id)
            if best is None or key < best[0]:
                ranked[entry.benchmark_id] = (key, task)
    return {benchmark: task for benchmark, (_, task) in ranked.items()}


def lm_eval_task(benchmark_id: str, chat: bool = False) -> str | None:
    return preferred_tasks("lm_eval", generative_only=chat).get(benchmark_id)


def inspect_task(benchmark_id: str) -> str | None:
    return preferred_tasks("inspect").get(benchmark_id)  # every Inspect task generates


@dataclass(frozen=True)
class NextSteps:
    """Ready command lines for running `benchmarks` and predicting from what they write."""

    benchmarks: list[str]
    lm_eval: str | None  # one lm_eval line for every benchmark with an lm-eval task
    inspect: list[str]  # one `inspect eval` line per benchmark with an Inspect task
    predict: str  # the `benchpress predict --from` that reads the results back
    unknown: list[str] = field(default_factory=list)  # benchmarks no tool task runs
    # Inspect tasks known by a bare name (no `package/task` registry name to run it by)
    unregistered: list[str] = field(default_factory=list)
    # lm-eval tasks scored by running the model's code: the line tells lm-eval to run them
    runs_code: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The commands as printed: lm-eval, or else Inspect (each runs the benchmarks it
        can; run one tool per benchmark, or the two scores of one benchmark conflict), then
        the predict that reads the results back. Nothing to run: no lines."""
        lines = []
        if self.lm_eval:
            lines += ["to run them with lm-eval:", f"  {self.lm_eval}"]
            if self.runs_code:
                lines.append(
                    f"  ({', '.join(self.runs_code)} runs the code the model writes, on this "
                    f"machine: hence {LM_EVAL_UNSAFE} and {CODE_EVAL_VARIABLE})"
                )
        if self.inspect:
            lines.append("or with Inspect:" if self.lm_eval else "to run them with Inspect:")
            lines += [f"  {line}" for line in self.inspect]
        if lines:
            lines += ["then predict from what they write:", f"  {self.predict}"]
        return lines

    def as_dict(self) -> dict[str, object]:
        return {
            "lm_eval": self.lm_eval,
            "inspect": self.inspect,
            "predict": self.predict,
            "no_known_task": self.unknown,
            "inspect_unregistered": self.unregistered,
        }


def _without_from(args: Sequence[str], output: str) -> list[str]:
    """`args` without a `--from` of `output` itself (`results` or `./results/` too): the
    predict line reads it already, and `next --from results/` must not print it twice."""
    same = posixpath.normpath(output.replace("\\", "/"))
    kept: list[str] = []
    pairs = iter(args)
    for arg in pairs:
        if arg == "--from":
            path = next(pairs, None)
            if path is not None and posixpath.normpath(path.replace("\\", "/")) == same:
                continue
            kept += [arg] if path is None else [arg, path]
        else:
            kept.append(arg)
    return kept


def next_steps(
    benchmarks: Sequence[str],
    predict_args: Sequence[str] = (),
    output: str = RESULTS_DIR,
    chat_model_type: str | None = None,
) -> NextSteps:
    """Command lines that run `benchmarks` (each with lm-eval if it can, Inspect if it can)
    into `output`, then predict from it; `predict_args` are added to that predict line (the
    scores or files already known, e.g. `["--from", "old/"]`). `chat_model_type`: lm-eval's
    model type of a chat endpoint (`local-chat-completions`), whose line runs the generative
    tasks on it with its chat template; else a local Hugging Face model (`hf`). A task
    scored by running the model's code (`task_facts.RUNS_MODEL_CODE`) adds lm-eval's
    `--confirm_run_unsafe_code` and `HF_ALLOW_CODE_EVAL=1`, without which it is refused."""
    chat = chat_model_type is not None
    lm_tasks = list(dict.fromkeys(t for b in benchmarks if (t := lm_eval_task(b, chat))))
    inspect_tasks = list(dict.fromkeys(t for b in benchmarks if (t := inspect_task(b))))
    out = shlex.quote(output)
    model = (
        f"--model {shlex.quote(chat_model_type)} --model_args {LM_EVAL_CHAT_MODEL} "
        "--apply_chat_template"
        if chat_model_type is not None
        else f"--model hf --model_args {LM_EVAL_MODEL}"
    )
    runs_code = [t for t in lm_tasks if runs_model_code("lm_eval", t)]
    unsafe = bool(runs_code)
    lm_eval = (
        f"{CODE_EVAL_VARIABLE + ' ' if unsafe else ''}lm_eval {model} "
        f"--tasks {shlex.quote(','.join(lm_tasks))} --output_path {out}"
        f"{' ' + LM_EVAL_UNSAFE if unsafe else ''}"
        if lm_tasks
        else None
    )
    inspect = [
        f"inspect eval {shlex.quote(task)} --model {INSPECT_MODEL} --log-dir {out}"
        for task in inspect_tasks
        if "/" in task
    ]
    extra = _without_from(predict_args, output)
    predict = shlex.join(["benchpress", "predict", "--from", output, *extra])
    unknown = [b for b in benchmarks if lm_eval_task(b, chat) is None and inspect_task(b) is None]
    bare = [t for t in inspect_tasks if "/" not in t]
    return NextSteps(list(benchmarks), lm_eval, inspect, predict, unknown, bare, runs_code)
