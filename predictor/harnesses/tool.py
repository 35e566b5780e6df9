"""`ProbeTool`: what `benchpress run` asks of the class that runs a harness's tasks
(`predictor.harnesses.base.Harness.tool`), with the defaults a tool without an opinion gets.
A harness's module subclasses it beside its descriptor (`predictor.harnesses.lm_eval`).

The runner builds one per run from the planned tasks and the include folders, asks it before
any request whether the model type exists (`check_model_type`), which tasks it knows and how
big they are (`known`, `size`), which finished in an earlier run (`finished`), and runs each
task in a process of its own (`run`, `predictor.runs.isolation`). Everything the runner, the
endpoint settings and the isolation would otherwise decide by the tool's name is a class
attribute or class method here."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from predictor.harnesses.endpoint import Endpoint
from predictor.util.item_subsets import ItemSubset

# `benchpress run`'s tool options (`predictor.runs.options`), lm-eval's names for them, and
# the key under which a task's results record them (a re-run with others does not resume it)
PASS_THROUGH = ("num_fewshot", "batch_size", "apply_chat_template", "gen_kwargs")
OPTIONS_KEY = "benchpress_options"


def recorded_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The pass-through options among `options`, as JSON values ({} for none)."""
    given = {k: options[k] for k in PASS_THROUGH if k in (options or {})}
    return json.loads(json.dumps(given, default=str))


class ProbeTool:
    """Base of the tools that run probe tasks (module docstring)."""

    name: ClassVar[str]  # the harness id
    # modules the run's process imports before forking each task's process (its memory cap
    # then starts above them)
    preload: ClassVar[tuple[str, ...]] = ()
    # the task's process checks every log-likelihood the model answers is finite
    checks_log_probs: ClassVar[bool] = False
    # `--model-args` text typed as lm-eval types its command line (`8` -> 8); else text
    typed_model_args: ClassVar[bool] = True
    # the environment variable the tool reads the endpoint's key from (None: it gets none)
    key_variable: ClassVar[str | None] = None
    # the tool runs a seeded random subset of each task's items (`--items N`): `run` and
    # `finished` then take `subset=` (`predictor.util.item_subsets`); a tool without it
    # never gets the keyword, and `--items` is refused for it before anything runs
    runs_subsets: ClassVar[bool] = False
    # `--tokenizer NAME`: the tool tokenizes locally with that Hugging Face tokenizer
    takes_tokenizer: ClassVar[bool] = False

    def __init__(self, tasks: Sequence[str], include_path: Sequence[Path] = ()) -> None:
        self.tasks = list(tasks)
        self.include_path = [Path(p) for p in include_path]

    @classmethod
    def endpoint_args(
        cls, model: str, kind: str, args: dict[str, object], base_url: str | None, timeout: float
    ) -> dict[str, object]:
        """The model arguments the tool gets for model `model` of type `kind` (the tool's
        spelling of the endpoint, the model's name, the timeout)."""
        return dict(args)

    @classmethod
    def key_variables(cls, endpoint: Endpoint) -> dict[str, str]:
        """The variable that hands the key to the tool (`key_variable`); none without a key,
        or for a tool that reads no key."""
        if not endpoint.api_key or not cls.key_variable:
            return {}
        return {cls.key_variable: endpoint.api_key}

    @classmethod
    def variables(cls, endpoint: Endpoint) -> dict[str, str]:
        """The environment variables of the task's process (never of the run's): the key's,
        and whatever else the tool reads from there."""
        return cls.key_variables(endpoint)

    @classmethod
    def check_model_type(cls, model_type: str) -> None:
        """Refuse a model type the tool does not have, before any task runs."""

    @classmethod
    def tool_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        """The run options of `benchpress run` (`predictor.runs.options`: `num_fewshot`,
        `batch_size`, `apply_chat_template`, `gen_kwargs`) in the tool's own spelling;
        `SettingsError` naming an option the tool has no equivalent of."""
        return dict(options)

    def datasets(self, task: str) -> list[tuple[str, str | None]]:
        """(Hub dataset or local path, configuration) of every dataset the task loads, checked
        before the first task (`predictor.runs.dataset_preflight`); [] when unknown."""
        return []

    def known(self, task: str) -> bool:
        """Whether the tool can find a task the user named (`--task`)."""
        return True

    def version(self, task: str) -> str | None:
        return None

    def size(self, task: str) -> tuple[int | None, int | None]:
        """(items, estimated tokens per item) of a task outside the facts table."""
        return None, None

    def finished(
        self,
        out: Path,
        endpoint: Endpoint,
        task: str,
        limit: int | None,
        subset: ItemSubset | None = None,
    ) -> Path | None:
        """The results file of an earlier complete run of this task for this model (with this
        limit, or over this subset of items), or None."""
        return None

    def run(
        self,
        endpoint: Endpoint,
        task: str,
        out: Path,
        limit: int | None,
        options: Mapping[str, Any],
        subset: ItemSubset | None = None,
    ) -> Path:
        """Evaluate one task (`subset`: only its items in that seeded subset, recorded in
        the results file); the path of its results file, in `<out>/<task>/` once complete
        (`predictor.harnesses.staging`)."""
        raise NotImplementedError
