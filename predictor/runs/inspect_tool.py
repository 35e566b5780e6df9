"""Running one probe task with Inspect, in this process, through its Python API
(`inspect_ai.eval`), the `inspect` extra (which brings `inspect_evals` for registry tasks).

As for lm-eval (`predictor.runs.lm_eval_tool`): one task at a time, its native log (`.eval`)
moved into `<out>/<task>/` once complete, and a task whose successful log for this model and
sample limit is there is not run again.

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

from predictor.extras import MissingExtraError, install_hint
from predictor.runs.redact import plain_text
from predictor.runs.settings import INSPECT_SERVICE, Endpoint
from predictor.runs.staging import discard, publish, staging_folder, task_folder

TOOL = "inspect"
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


class InspectTool:
    name = TOOL

    def __init__(self, tasks: Sequence[str], include_path: Sequence[Path] = ()) -> None:
        self.include_path = [Path(p) for p in include_path]

    def check_model_type(self, model_type: str) -> None:
        """The provider's own package, before any task (Inspect resolves the provider itself
        when it runs: a wrong name fails the first task)."""
        check_provider(model_type)

    def known(self, task: str) -> bool:
        return True  # Inspect resolves registry names and task files when it runs them

    def version(self, task: str) -> str | None:
        return None

    def size(self, task: str) -> tuple[int | None, int | None]:
        return None, None  # known only once Inspect loads the task's dataset

    def finished(self, out: Path, endpoint: Endpoint, task: str, limit: int | None) -> Path | None:
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
        kwargs.update(options)
        spec = task
        if "@" in task and not Path(task.partition("@")[0]).is_absolute():
            spec = _in_include_path(task, self.include_path)
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


def _in_include_path(task: str, include_path: Sequence[Path]) -> str:
    """`file.py@name` found in one of the include folders (else as given, from the cwd)."""
    file, _, name = task.partition("@")
    for folder in include_path:
        if (folder / file).is_file():
            return f"{folder / file}@{name}"
    return task
