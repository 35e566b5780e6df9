"""Inspect as a probe-running harness: its descriptor (`INSPECT`, at the end) and the tool
that runs one task in this process through Inspect's Python API (`inspect_ai.eval`), the
`inspect` extra (which brings `inspect_evals` for registry tasks). Its tasks come from
`predictor/results/maps/inspect.csv`. Every Inspect task talks to a chat model, so one probe
set serves every model type; a task runs by its registry name (`inspect_evals/gpqa_diamond`),
never by a bare name a results file once recorded.

As for lm-eval (`predictor.harnesses.lm_eval`): one task at a time, its native log (`.eval`)
moved into `<out>/<task>/` once complete, and a task whose successful log for this model and
sample limit (or item subset) is there is not run again. A subset of the items (`--items N`,
`predictor.util.item_subsets`) runs as Inspect's `sample_id` (the ids of the drawn positions
of the task's dataset, which Inspect records with the dataset's size), and the record of it
goes into the log's `eval.metadata` (`benchpress_subset`).

Model types are Inspect providers: `vllm`, `hf`, `ollama`, ... run `PROVIDER/MODEL`;
`openai-api` runs any OpenAI-compatible endpoint as `openai-api/endpoint/MODEL`, with the
URL and key handed over as Inspect reads them (`ENDPOINT_BASE_URL`, `ENDPOINT_API_KEY`).

A provider's own Python package (`openai` for `openai-api`, `vllm`, ...: the `inspect` extra
brings it) is checked before the first task, not found missing by every task in turn; the
model goes to Inspect as a one-item list, as a string it would be split at its commas into
several models; Inspect's messages are shown without their Rich console markup."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from predictor.harnesses.base import Harness
from predictor.harnesses.endpoint import Endpoint, SettingsError
from predictor.harnesses.redact import plain_text
from predictor.harnesses.staging import discard, publish, staging_folder, task_folder
from predictor.harnesses.tool import OPTIONS_KEY, PASS_THROUGH, ProbeTool, recorded_options
from predictor.util.extras import MissingExtraError, install_hint
from predictor.util.item_subsets import SUBSET_KEY, ItemSubset, SubsetRecord, record_matches

TOOL = "inspect"
# Inspect's OpenAI-compatible provider `openai-api/<service>/<model>` reads
# <SERVICE>_BASE_URL and <SERVICE>_API_KEY; benchpress names the service `endpoint`
INSPECT_SERVICE = "endpoint"
EXTRA = "inspect"  # the extra that installs Inspect and the client of its OpenAI providers
# Inspect's providers -> the Python packages (distribution, module) each needs
# (inspect_ai/model/_providers/providers.py); `openai` is in the `inspect` extra
_OPENAI = (("openai", "openai"),)
PROVIDER_PACKAGES: dict[str, tuple[tuple[str, str], ...]] = {
    **dict.fromkeys(
        (
            "openai",
            "openai-api",
            "openai-api-completions",
            "vllm",
            "vllm-completions",
            "sglang",
            "ollama",
            "llama-cpp-python",
            "together",
            "fireworks",
            "openrouter",
            "deepseek",
            "moonshot",
            "meta",
            "litellm-proxy",
            "sambanova",
            "perplexity",
            "cloudflare",
            "hf-inference-providers",
        ),
        _OPENAI,
    ),
    "anthropic": (("anthropic", "anthropic"),),
    "google": (("google-genai", "google.genai"),),
    "mistral": (("mistralai", "mistralai"),),
    "groq": (("groq", "groq"),),
    "grok": (("xai-sdk", "xai_sdk"),),
    "azureai": (("azure-ai-inference", "azure.ai.inference"),),
    "hf": (("torch", "torch"), ("transformers", "transformers"), ("accelerate", "accelerate")),
    "transformer_lens": (("transformer-lens", "transformer_lens"),),
    "nnterp": (("nnterp", "nnterp"),),
}


def _installed(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing (azure), or blocked
        return False


def check_provider(model_type: str) -> None:
    """`MissingExtraError` naming what to install when the provider's Python package is not
    there (a provider not in `PROVIDER_PACKAGES` is left for Inspect to resolve)."""
    provider = model_type.partition("/")[0]
    missing = [d for d, m in PROVIDER_PACKAGES.get(provider, ()) if not _installed(m)]
    if not missing:
        return
    names = ", ".join(missing)
    package = "package" if len(missing) == 1 else "packages"
    install = install_hint(EXTRA) if missing == ["openai"] else f"pip install {' '.join(missing)}"
    raise MissingExtraError(
        f"Inspect's {provider} provider needs the Python {package} {names}, which "
        f"{'is' if len(missing) == 1 else 'are'} not installed: {install}"
    )


def inspect_model(endpoint: Endpoint) -> str:
    """The Inspect model name for a model type and a model's name."""
    if endpoint.model_type == "openai-api":
        return f"openai-api/{INSPECT_SERVICE}/{endpoint.model}"
    return f"{endpoint.model_type}/{endpoint.model}"


def _log_task(task: str) -> str:
    """The task name Inspect records for a task spec (`file.py@name` records `name`)."""
    return task.rpartition("@")[2] if "@" in task else task


class InspectTool(ProbeTool):
    """Inspect's runs of one task each. It resolves registry names and task files when it
    runs them (`known`: every task), and knows a task's size only once it loads the dataset
    (`size`: unknown)."""

    name = TOOL
    preload = ("inspect_ai",)
    typed_model_args = False  # Inspect's providers take their arguments as text
    key_variable = f"{INSPECT_SERVICE.upper()}_API_KEY"
    runs_subsets = True

    @classmethod
    def variables(cls, endpoint: Endpoint) -> dict[str, str]:
        """The key, and for `openai-api` the endpoint's URL, as its provider reads them."""
        values = cls.key_variables(endpoint)
        if endpoint.model_type == "openai-api" and endpoint.base_url:
            values[f"{INSPECT_SERVICE.upper()}_BASE_URL"] = endpoint.base_url
        return values

    @classmethod
    def tool_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        """`--gen-kwargs` as Inspect's generation settings (`GenerateConfig`: temperature,
        top_p, max_tokens, seed, ...; lm-eval's `max_gen_toks` is `max_tokens`); the other
        options have no Inspect equivalent and are refused."""
        if "num_fewshot" in options:
            raise SettingsError(
                "--num-fewshot: Inspect has no such option; an Inspect task sets its own "
                "shots (a task argument), or run the task with --harness lm-eval"
            )
        if "batch_size" in options:
            raise SettingsError(
                "--batch-size: Inspect sends requests concurrently instead of in batches "
                "(max_connections=N through the API's harness options)"
            )
        if "apply_chat_template" in options:
            raise SettingsError(
                "--apply-chat-template: Inspect always sends chat messages; the server's chat "
                "template applies"
            )
        given = dict(options.get("gen_kwargs") or {})
        if "max_gen_toks" in given:
            given.setdefault("max_tokens", given.pop("max_gen_toks"))
        from inspect_ai.model import GenerateConfig  # deferred: the optional tool

        unknown = [k for k in given if k not in GenerateConfig.model_fields]
        if unknown:
            raise SettingsError(
                f"--gen-kwargs: Inspect has no generation setting {unknown[0]!r} (it takes "
                "temperature, top_p, top_k, max_tokens, seed, stop_seqs, ...)"
            )
        return given

    @classmethod
    def check_model_type(cls, model_type: str) -> None:
        """The provider's own package, before any task (Inspect resolves the provider itself
        when it runs: a wrong name fails the first task)."""
        check_provider(model_type)

    def finished(
        self,
        out: Path,
        endpoint: Endpoint,
        task: str,
        limit: int | None,
        subset: ItemSubset | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> Path | None:
        from inspect_ai.log import read_eval_log  # deferred: the optional tool, to resume

        folder = task_folder(out, task)
        if not folder.is_dir():
            return None
        for path in sorted(folder.glob("*.eval"), reverse=True):
            try:
                log = read_eval_log(str(path), header_only=True)
            except Exception:  # noqa: BLE001 - an unreadable log is not a finished task
                continue
            name = log.eval.task.rpartition("/")[2]
            if (
                log.status == "success"
                and name == _log_task(task).rpartition("/")[2]
                and log.eval.model == inspect_model(endpoint)
                and log.eval.config.limit == limit
                and _same_subset(log.eval, subset)
                and ((log.eval.metadata or {}).get(OPTIONS_KEY) or {}) == recorded_options(options)
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
        from inspect_ai import eval as inspect_eval  # deferred: the optional tool, to run

        staging = staging_folder(out, task)
        kwargs: dict[str, Any] = {
            "model": [inspect_model(endpoint)],  # a string is split at its commas
            "log_dir": str(staging),
            "log_format": "eval",
            "limit": limit,
            "timeout": int(endpoint.timeout),
            "max_retries": 3,
            "display": "none",
        }
        if endpoint.base_url and endpoint.model_type != "openai-api":
            kwargs["model_base_url"] = endpoint.base_url
        given = {k: v for k, v in endpoint.model_args.items() if k != "base_url"}
        if given:
            kwargs["model_args"] = given
        spec = task
        if "@" in task and not Path(task.partition("@")[0]).is_absolute():
            spec = _in_include_path(task, self.include_path)
        if subset is not None:
            record, chosen = _subset(spec, _log_task(task), subset)
            kwargs["metadata"] = {SUBSET_KEY: record.as_json()}
            if chosen is not None:
                kwargs["sample_id"] = chosen
        given_metadata = options.get("metadata")
        kwargs.update({k: v for k, v in options.items() if k not in PASS_THROUGH})
        kwargs.update(self.tool_options(options))  # --gen-kwargs as Inspect's settings
        if subset is not None and isinstance(given_metadata, Mapping):  # the caller's, and ours
            kwargs["metadata"] = {**given_metadata, SUBSET_KEY: record.as_json()}
        if recorded_options(options):  # a re-run with other options runs the task again
            kwargs["metadata"] = {
                **(kwargs.get("metadata") or {}),
                OPTIONS_KEY: recorded_options(options),
            }
        with discard(staging):  # a failed task's log (errors quoting the server) goes too
            try:
                logs = inspect_eval(spec, **kwargs)
            except Exception as error:
                message = str(error)
                if plain_text(message) == " ".join(message.split()):
                    raise
                # Inspect's words for its Rich console ([bold]ERROR[/bold]: ...), as plain text
                raise RuntimeError(f"Inspect: {plain_text(message)}") from error
            if not logs or logs[0].status != "success":
                error = getattr(logs[0], "error", None) if logs else None
                message = getattr(error, "message", None) or "the task did not finish"
                raise RuntimeError(f"Inspect: {plain_text(message)}")
            return publish(staging, "*.eval", out, task)


def _subset(spec: str, name: str, subset: ItemSubset) -> tuple[SubsetRecord, list | None]:
    """The subset drawn over the task's dataset, and the ids of its samples for Inspect's
    `sample_id` (None: every sample). Samples without ids get Inspect's own, 1 to n."""
    from inspect_ai._eval.loader import load_tasks  # deferred: the optional tool, to run

    (loaded,) = load_tasks([spec])
    ids = [sample.id for sample in loaded.dataset]
    if all(i is None for i in ids):
        ids = list(range(1, len(ids) + 1))
    elif any(i is None for i in ids):
        raise RuntimeError(
            f"task {name}: some samples have ids and some not, so a subset of them cannot "
            "be named; run it without --items"
        )
    record = SubsetRecord.drawn(subset, {name: len(ids)})
    if record.indices is None:
        return record, None
    return record, [_literal(ids[i]) for i in record.indices[name]]


def _literal(sample_id: object) -> object:
    """An id as Inspect's `sample_id` matches it literally (it matches ids as glob
    patterns: `*`, `?` and `[` stand for themselves only in brackets)."""
    if not isinstance(sample_id, str):
        return sample_id
    return "".join(f"[{c}]" if c in "*?[" else c for c in sample_id)


def _same_subset(spec, subset: ItemSubset | None) -> bool:
    """Whether a log ran the subset asked for (none: every sample, no `sample_id`)."""
    recorded = (getattr(spec, "metadata", None) or {}).get(SUBSET_KEY)
    if subset is None and spec.config.sample_id is not None:
        return False
    return record_matches(recorded, subset)


def _in_include_path(task: str, include_path: Sequence[Path]) -> str:
    """`file.py@name` found in one of the include folders (else as given, from the cwd)."""
    file, _, name = task.partition("@")
    for folder in include_path:
        if (folder / file).is_file():
            return f"{folder / file}@{name}"
    return task


INSPECT = Harness(
    id=TOOL,
    name="inspect",
    label="Inspect",
    title="Inspect",
    package="inspect_ai",
    extra=EXTRA,
    tool=InspectTool,
    model_types=("openai-api", "vllm", "hf"),
    registry_names_only=True,
)
