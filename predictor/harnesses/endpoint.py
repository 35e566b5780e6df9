"""`Endpoint`: the model a probe tool is handed, once `benchpress run` has resolved it from
the arguments and the environment (`predictor.runs.settings.resolve_endpoint`), and
`SettingsError`, what a tool raises for settings it cannot run with.

It sits beside the tools (`predictor.harnesses.tool`) and knows no registry: a harness's
module imports it, and the registry imports that module."""

from __future__ import annotations

from dataclasses import dataclass, field

# the variable that sets the endpoint's URL (`predictor.runs.settings`), named in messages
BASE_URL_ENV = "BENCHPRESS_MODEL_BASE_URL"
MAX_RETRIES = 3

# lm-eval model types that talk to an HTTP endpoint (preflight-checked, timeout applied)
LM_EVAL_API_TYPES = frozenset(
    {
        "local-completions",
        "local-chat-completions",
        "openai-completions",
        "openai-chat-completions",
    }
)
# model types that only accept chat messages: no prompt log-probs, so generative tasks only
CHAT_TYPES = frozenset(
    {
        "local-chat-completions",
        "openai-chat-completions",
        "anthropic-chat",
        "anthropic-chat-completions",
        "litellm",
    }
)


class SettingsError(ValueError):
    """A run's settings are missing or malformed: the message names the argument or the
    environment variable to fix."""


def chat_only(model_type: str | None) -> bool:
    """True for a model type that only takes chat messages (generative tasks only)."""
    return model_type is not None and model_type.strip().lower() in CHAT_TYPES


@dataclass(frozen=True)
class Endpoint:
    """One model to run: the tool's model type and arguments, the key kept out of them."""

    model: str
    model_type: str
    model_args: dict[str, object]
    base_url: str | None
    base_url_origin: str  # what set the URL, for messages: an argument or the variable
    timeout: float
    api_key: str | None = field(default=None, repr=False)

    @property
    def is_api(self) -> bool:
        return self.model_type in LM_EVAL_API_TYPES or self.model_type.startswith("openai-api")

    @property
    def chat(self) -> bool:
        return chat_only(self.model_type)
