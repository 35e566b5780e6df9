"""lm-evaluation-harness as a probe-running harness: its descriptor (`LM_EVAL`, at the end)
and the tool that runs one task in this process through lm-eval's Python API
(`lm_eval.simple_evaluate`, what `lm-eval run` calls). Its tasks come from
`predictor/results/maps/lm_eval.csv`; a chat endpoint gets a probe set of its own
(`lm_eval_chat`): it gives no prompt log-probs, so only the generative tasks can run on it.

Each task runs on its own and its native results file (`results_<date>.json`, as lm-eval's
`EvaluationTracker` writes it) is moved into `<out>/<task>/` only once complete, so a run
stopped at any point leaves every finished task usable and nothing half-written where the
readers look. A task whose file for this model, model type, task version and item limit (or
item subset) is already there is not run again: re-running a command resumes it.

A subset of the items (`--items N`, `predictor.util.item_subsets`) is drawn in the task's
process from the task's real item counts (each task of a group: lm-eval's
`simple_evaluate(samples={task: [positions]})`), and recorded in the results file under
`benchpress_subset` (seed, items asked, the task's item count, the positions and their
sha256): lm-eval's own file says only how many items ran (`n-samples`), not which.

lm-eval indexes its ~14,700 built-in task configs before it can load one (about 20 s of CPU);
when every task asked for is a user's own (found in `include_path`), the index is built from
that folder alone."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from predictor.harnesses.base import Harness
from predictor.harnesses.endpoint import (
    BASE_URL_ENV,
    CHAT_TYPES,
    LM_EVAL_API_TYPES,
    MAX_RETRIES,
    Endpoint,
    SettingsError,
)
from predictor.harnesses.staging import discard, publish, staging_folder, task_folder
from predictor.harnesses.tool import OPTIONS_KEY, ProbeTool, recorded_options
from predictor.util.item_subsets import SUBSET_KEY, ItemSubset, SubsetRecord, record_matches

TOOL = "lm_eval"
# Hugging Face's `code_eval` metric (HumanEval, MBPP) refuses to run without this variable
CODE_EVAL_VARIABLE = "HF_ALLOW_CODE_EVAL"
# lm-eval reads an API model's key from this variable (its OpenAI-compatible models)
KEY_VARIABLE = "OPENAI_API_KEY"


def check_model_type(model_type: str) -> None:
    """`SettingsError` naming the closest ones when lm-eval has no model type `model_type`;
    ImportError without lm-eval."""
    from lm_eval.api import registry  # deferred: the run's optional tool

    try:
        registry.get_model(model_type)  # imports lm-eval's models, which register
    except ValueError:
        names = sorted(registry.MODEL_REGISTRY)
        close = difflib.get_close_matches(model_type, names, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise SettingsError(f"lm-eval has no model type {model_type!r}{hint}") from None


def _full_endpoint(kind: str, base_url: str) -> str:
    """lm-eval posts to `base_url` as it is: a server's root or `/v1` would answer 404 to
    every request, so a URL that does not name the route is refused with the one to use."""
    route = "chat/completions" if kind in CHAT_TYPES else "completions"
    path = urlsplit(base_url).path.rstrip("/")
    if not path.endswith("completions"):
        stem = base_url.rstrip("/")
        suggestion = f"{stem}/{route}" if path.endswith("/v1") else f"{stem}/v1/{route}"
        raise SettingsError(
            f"base_url {base_url} names no route: lm-eval's {kind} posts to the full "
            f"endpoint, e.g. base_url={suggestion}"
        )
    return base_url


def lm_eval_args(
    model: str, kind: str, args: dict[str, object], base_url: str | None, timeout: float
) -> dict[str, object]:
    """The model arguments lm-eval gets (`LmEvalTool.endpoint_args`)."""
    out = dict(args)
    if kind in LM_EVAL_API_TYPES:
        if kind.startswith("local-") and not base_url:
            raise SettingsError(
                f"model type {kind} needs the endpoint: --model-args "
                f"base_url=http://HOST:PORT/v1/{'chat/' if kind in CHAT_TYPES else ''}"
                f"completions or {BASE_URL_ENV}"
            )
        out.setdefault("model", model)
        if base_url:
            out["base_url"] = _full_endpoint(kind, base_url)
        # vLLM's server (and the like) tokenizes for lm-eval: nothing to download; a
        # tokenizer given (`--tokenizer`, for llama.cpp's server) tokenizes locally
        if kind == "local-completions":
            local = out.get("tokenizer") is not None
            out.setdefault("tokenizer_backend", "huggingface" if local else "remote")
        out.setdefault("timeout", int(timeout) if timeout.is_integer() else timeout)
        out.setdefault("max_retries", MAX_RETRIES)
    elif "pretrained" not in out and "model" not in out:
        out["pretrained"] = model
    return out


class LmEvalTool(ProbeTool):
    """lm-eval's task index for the tasks of one run, and the runs themselves."""

    name = TOOL
    preload = ("lm_eval.evaluator", "lm_eval.loggers", "lm_eval.models")
    checks_log_probs = True
    key_variable = KEY_VARIABLE
    runs_subsets = True
    takes_tokenizer = True

    def __init__(self, tasks: Sequence[str], include_path: Sequence[Path] = ()) -> None:
        super().__init__(tasks, include_path)
        self.include_path = [str(p) for p in include_path]  # as lm-eval takes them
        self._manager = None

    @classmethod
    def endpoint_args(
        cls, model: str, kind: str, args: dict[str, object], base_url: str | None, timeout: float
    ) -> dict[str, object]:
        """An API model type gets the model's name, the full endpoint, the timeout and a
        bounded retry count; local weights get the name as `pretrained`."""
        return lm_eval_args(model, kind, args, base_url, timeout)

    @property
    def manager(self):
        """lm-eval's `TaskManager`, built on first use (a plan of public tasks with nothing
        to resume needs none): the include folders alone when they hold every task."""
        if self._manager is None:
            try:
                from lm_eval.tasks import TaskManager  # deferred: the run's optional tool
            except ImportError:
                raise ImportError(
                    "benchpress run needs lm-evaluation-harness: pip install "
                    "'benchpress-llm[lm-eval]'"
                ) from None
            paths = self.include_path
            manager = TaskManager(include_path=paths, include_defaults=False) if paths else None
            if manager is None or any(t not in manager.task_index for t in self.tasks):
                manager = TaskManager(include_path=paths or None)
            self._manager = manager
        return self._manager

    @classmethod
    def check_model_type(cls, model_type: str) -> None:
        """Refuse a model type lm-eval does not have before any task runs (a typo would
        otherwise fail every task the same way)."""
        check_model_type(model_type)

    def known(self, task: str) -> bool:
        return task in self.manager.task_index

    def datasets(self, task: str) -> list[tuple[str, str | None]]:
        """(`dataset_path`, `dataset_name`) of the task's configs, a group's or a tag's
        tasks each (lm-eval's index holds every config with its includes resolved)."""
        found: dict[tuple[str, str | None], None] = {}
        seen: set[str] = set()
        todo: list[object] = [task]
        while todo:
            item = todo.pop()
            if isinstance(item, dict):  # a group's task given inline
                config, name = item, None
            else:
                name = str(item)
                if name in seen:
                    continue
                seen.add(name)
                entry = self.manager.task_index.get(name)
                if entry is None:
                    continue
                config = entry.cfg or {}
                todo.extend(sorted(getattr(entry, "tags", None) or ()) if not config else ())
            if config.get("dataset_path"):
                path = str(config["dataset_path"])
                named = config.get("dataset_name")
                found[(path, None if named is None else str(named))] = None
            members = config.get("task")
            if isinstance(members, list):
                todo.extend(members)
            elif isinstance(members, str) and members != name and "dataset_path" not in config:
                todo.append(members)
        return list(found)

    def version(self, task: str) -> str | None:
        """The task's version in its config (`metadata.version`), None if it has none."""
        entry = self.manager.task_index.get(task)
        config = (entry.cfg if entry is not None else None) or {}
        version = (config.get("metadata") or {}).get("version")
        return None if version is None else str(version)

    def size(self, task: str) -> tuple[int | None, int | None]:
        """(documents, estimated tokens per document) of a task, by loading it (its dataset:
        local files for a user's own task; a download for a public one). Tokens: the prompt
        at ~4 characters a token, once per answer choice for a multiple-choice task, plus the
        generation budget for a generative one. (None, None) when it cannot be loaded."""
        try:
            loaded = self.manager.load([task])
        except Exception:  # noqa: BLE001 - any loading failure only leaves the size unknown
            return None, None
        items, tokens = 0, 0
        for built in loaded.get("tasks", {}).values():
            docs = list(built.eval_docs or [])
            items += len(docs)
            tokens += sum(_doc_tokens(built, doc) for doc in docs)
        return (items, round(tokens / items)) if items else (None, None)

    def finished(
        self,
        out: Path,
        endpoint: Endpoint,
        task: str,
        limit: int | None,
        subset: ItemSubset | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> Path | None:
        """The results file of an earlier complete run of this task for this model (the same
        limit; the same subset of items, or none for a full run; the same tool options), or
        None."""
        folder = task_folder(out, task)
        files = sorted(folder.glob("results_*.json"), reverse=True) if folder.is_dir() else []
        if not files:
            return None
        want_version = self.version(task)
        name = endpoint.model_args.get("model") or endpoint.model_args.get("pretrained")
        name = None if name is None else str(name)
        for path in files:
            doc = _read_json(path)
            config = doc.get("config") or {}
            versions = doc.get("versions") or {}
            if (
                task in (doc.get("results") or {})
                and doc.get("model_name") == name
                and config.get("model") == endpoint.model_type
                and config.get("limit") == limit
                and (want_version is None or str(versions.get(task)) == want_version)
                and record_matches(doc.get(SUBSET_KEY), subset)
                and (doc.get(OPTIONS_KEY) or {}) == recorded_options(options)
            ):
                return path
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
        """Evaluate one task (`subset`: its items in that seeded subset); the path of its
        results file, in place once complete."""
        from lm_eval import simple_evaluate  # deferred: the optional tool, loaded to run
        from lm_eval.loggers import EvaluationTracker  # deferred: as above

        staging = staging_folder(out, task)
        tracker = EvaluationTracker(output_path=str(staging))
        kwargs: dict[str, Any] = {
            "model": endpoint.model_type,
            # a dict, never the `k=v,...` string: no value (the model's name, a URL) can add
            # arguments of its own, such as another base_url
            "model_args": dict(endpoint.model_args),
            "tasks": [task],
            "task_manager": self.manager,
            "limit": limit,
            "evaluation_tracker": tracker,
            "log_samples": False,
        }
        if endpoint.chat:
            kwargs["apply_chat_template"] = True
        if runs_code(task):  # asked for by name (`--probes humaneval`): no probe set has one
            kwargs["confirm_run_unsafe_code"] = True
            os.environ[CODE_EVAL_VARIABLE] = "1"  # this task's own process (`run_task`)
        record = self._subset(task, subset) if subset is not None else None
        if record is not None and record.indices is not None:
            kwargs["samples"] = record.indices
        kwargs.update(options)
        with discard(staging):  # a failed task leaves nothing behind
            results = simple_evaluate(**kwargs)
            if not results or task not in (results.get("results") or {}):
                raise RuntimeError(f"lm-eval returned no results for {task}")
            if record is not None:
                results[SUBSET_KEY] = record.as_json()
            if recorded_options(options):  # what --num-fewshot, --gen-kwargs, ... asked for
                results[OPTIONS_KEY] = recorded_options(options)
            tracker.save_results_aggregated(results=results, samples=None)
            return publish(staging, "results_*.json", out, task)

    def _subset(self, task: str, subset: ItemSubset) -> SubsetRecord:
        """The subset's items drawn over the task's real item counts (each task of a group:
        lm-eval runs a group's task it gets no positions for in full)."""
        loaded = self.manager.load([task])
        sizes = {name: len(built.eval_docs or []) for name, built in loaded["tasks"].items()}
        return SubsetRecord.drawn(subset, sizes)


def runs_code(task: str) -> bool:
    """Whether scoring `task` runs the code the model wrote (the task facts'
    `RUNS_MODEL_CODE`): lm-eval refuses such a task unless `confirm_run_unsafe_code` is
    given, and its metric unless `HF_ALLOW_CODE_EVAL=1` is set."""
    from predictor.results.task_facts import runs_model_code  # deferred: as in `_read_json`

    return runs_model_code(TOOL, task)


def _doc_tokens(task, doc) -> int:
    """Estimated tokens one document costs (see `LmEvalTool.size`)."""
    prompt = len(str(task.doc_to_text(doc))) // 4 + 1
    if task.OUTPUT_TYPE == "multiple_choice":
        return prompt * max(len(task.doc_to_choice(doc)), 1)
    if task.OUTPUT_TYPE == "generate_until":
        budget = (task.config.generation_kwargs or {}).get("max_gen_toks", 256)
        return prompt + int(budget)
    return prompt


def _read_json(path: Path) -> dict:
    """A results file as a dict, {} when it is not one (too large, unreadable, not JSON)."""
    # deferred: the results package loads Polars, which `benchpress run --help` must not
    from predictor.results.errors import ResultsError
    from predictor.results.jsonio import load_json  # deferred: as above
    from predictor.results.paths import read_file  # deferred: as above

    try:
        doc = load_json(read_file(path).data, str(path))
    except (ResultsError, OSError):
        return {}
    return doc if isinstance(doc, dict) else {}


LM_EVAL = Harness(
    id=TOOL,
    name="lm-eval",
    label="lm-eval",
    title="lm-evaluation-harness",
    package="lm_eval",
    extra="lm-eval",
    tool=LmEvalTool,
    model_types=(
        "hf",
        "vllm",
        "local-completions",
        "local-chat-completions",
        "openai-chat-completions",
        "dummy",
    ),
    chat_probe_set="lm_eval_chat",
)
