"""Which model `benchpress run` evaluates, where, and with which key: arguments first, then
the endpoint settings of the environment.

- `BENCHPRESS_MODEL_BASE_URL`: the endpoint, for lm-eval's API model types the full URL of
  the route it posts to (`http://HOST:PORT/v1/completions`, `.../v1/chat/completions`);
- `BENCHPRESS_MODEL_TYPE`: the tool's model type (`local-completions`, `hf`, `vllm`, ...;
  for Inspect a provider such as `openai-api`, `vllm`, `hf`);
- `BENCHPRESS_MODEL_API_KEY`: the key. It reaches the tool only through the tool's own
  environment variable (lm-eval writes `model_args` into its results file), and is never
  printed or written by benchpress;
- `BENCHPRESS_MODEL_TIMEOUT`: seconds one request may wait for the server, per read, and the
  endpoint check in all (default 120); a task's deadline is `--task-timeout`;
- `BENCHPRESS_PROBE_TASKS`: `benchmark=task,...`, tasks of the team's own that run those
  probes instead of the mapped ones (as `--task`), found in `BENCHPRESS_TASK_INCLUDE_PATH`
  (folders separated by the path separator, as lm-eval's `--include_path`).

`--model-args` are `key=value` pairs separated by commas, as on lm-eval's command line; the
tool gets them as a dict (values typed as lm-eval types them), never as that string, so a
value (the model's name above all) cannot add arguments of its own. The plan shows them in
that spelling, quoting a value that holds `,`, `=` or quotes.

The `Endpoint` resolved here is what the harness's tool is handed
(`predictor.harnesses.endpoint`)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

from predictor.harnesses import get_harness
from predictor.harnesses.endpoint import BASE_URL_ENV, Endpoint, SettingsError

TYPE_ENV = "BENCHPRESS_MODEL_TYPE"
KEY_ENV = "BENCHPRESS_MODEL_API_KEY"
TIMEOUT_ENV = "BENCHPRESS_MODEL_TIMEOUT"
TASKS_ENV = "BENCHPRESS_PROBE_TASKS"
INCLUDE_ENV = "BENCHPRESS_TASK_INCLUDE_PATH"
DEFAULT_TIMEOUT = 120.0


def parse_model_args(text: str | None) -> dict[str, str]:
    """`"pretrained=x,dtype=float16"` -> {"pretrained": "x", "dtype": "float16"}."""
    args: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise SettingsError(f"--model-args: expected key=value pairs, got {part.strip()!r}")
        args[key.strip()] = value.strip()
    return args


def parse_task_overrides(items, origin: str = "--task") -> dict[str, str]:
    """`["gpqa_diamond=my_gpqa"]` or `"a=x,b=y"` -> {benchmark: task}."""
    if isinstance(items, str):
        items = items.split(",")
    out: dict[str, str] = {}
    for item in items or ():
        if not item.strip():
            continue
        benchmark, sep, task = item.partition("=")
        if not sep or not benchmark.strip() or not task.strip():
            raise SettingsError(f"{origin}: expected BENCHMARK=TASK, got {item.strip()!r}")
        out[benchmark.strip()] = task.strip()
    return out


def env_task_overrides(env: Mapping[str, str] | None = None) -> tuple[dict[str, str], list[str]]:
    """The team's own probe tasks and their folders from the environment."""
    env = os.environ if env is None else env
    tasks = parse_task_overrides(env.get(TASKS_ENV, ""), TASKS_ENV)
    folders = [p for p in env.get(INCLUDE_ENV, "").split(os.pathsep) if p.strip()]
    return tasks, folders


def format_model_args(args: Mapping[str, object]) -> str:
    """The arguments as `key=value,...`, for people: a value that holds a separator (`,`,
    `=`), a quote or outer spaces is quoted, so the text reads as the arguments used."""
    return ",".join(f"{key}={_shown_value(value)}" for key, value in args.items())


def _shown_value(value: object) -> str:
    text = str(value)
    plain = text and text == text.strip() and not any(c in text for c in ",='\"")
    return text if plain or not isinstance(value, str) else repr(text)


def typed_value(text: str) -> object:
    """A `--model-args` value typed as lm-eval types its command line's (`true` -> True,
    `none` -> None, `8` -> 8, `0.5` -> 0.5, a quoted value -> the text inside the quotes)."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    lower = text.lower()
    if lower in ("true", "false"):
        return lower == "true"
    if lower == "none":
        return None
    if text.lstrip("+-").isdigit():
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def _timeout(env: Mapping[str, str], given: float | None) -> float:
    if given is not None:
        value, origin = given, "timeout"
    else:
        raw = env.get(TIMEOUT_ENV, "").strip()
        if not raw:
            return DEFAULT_TIMEOUT
        origin = TIMEOUT_ENV
        try:
            value = float(raw)
        except ValueError:
            raise SettingsError(f"{TIMEOUT_ENV}: expected seconds, got {raw!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise SettingsError(f"{origin}: expected seconds > 0, got {value!r}")
    return float(value)


def resolve_endpoint(
    model: str,
    harness: str = "lm_eval",
    model_type: str | None = None,
    model_args: str | Mapping[str, object] | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    tokenizer: str | None = None,
) -> Endpoint:
    """The endpoint of one run: `model_type` and `model_args` as given, else the settings.

    The model's name goes where the tool expects it (`model=` for API types, `pretrained=`
    for local weights) unless `model_args` name it; an API type gets the request timeout and
    a bounded retry count. An `api_key=` in `model_args` is refused: lm-eval would write it
    into its results file. `tokenizer` (`--tokenizer`): a Hugging Face tokenizer the tool
    tokenizes with itself, for a server that does not tokenize (llama.cpp's)."""
    env = os.environ if env is None else env
    if not model or not model.strip():
        raise SettingsError("the model's name is empty")
    kind = (model_type or env.get(TYPE_ENV, "").strip() or "").strip()
    if not kind:
        raise SettingsError(
            f"no model type: pass --model-type (e.g. local-completions, hf, vllm, dummy) "
            f"or set {TYPE_ENV}"
        )
    tool = get_harness(harness).tool
    # every tool gets a dict: values given as a mapping as they are (Inspect passes even a
    # function, e.g. mockllm's custom_outputs, to its provider); parsed from text, typed as
    # lm-eval's command line types them (`ProbeTool.typed_model_args`: lm-eval), else as text
    args: dict[str, object]
    if isinstance(model_args, Mapping):
        args = {str(k): v for k, v in model_args.items()}
    else:
        parsed = parse_model_args(model_args)
        typed = tool.typed_model_args
        args = {k: typed_value(v) for k, v in parsed.items()} if typed else dict(parsed)
    for secret in ("api_key", "auth_token"):
        if secret in args:
            raise SettingsError(
                f"--model-args: do not pass {secret}= (lm-eval writes model_args into its "
                f"results file); set {KEY_ENV} instead"
            )
    if tokenizer is not None:
        if not tokenizer.strip():
            raise SettingsError("--tokenizer: the tokenizer's name is empty")
        if not tool.takes_tokenizer:
            raise SettingsError(
                f"--tokenizer: {get_harness(harness).label} takes no tokenizer (the server's "
                "applies)"
            )
        args["tokenizer"] = tokenizer.strip()
    seconds = _timeout(env, timeout)
    given_url = args.get("base_url")
    base_url = None if given_url is None else str(given_url)
    origin = "--model-args base_url"
    if base_url is None and env.get(BASE_URL_ENV, "").strip():
        base_url, origin = env[BASE_URL_ENV].strip(), BASE_URL_ENV
    key = env.get(KEY_ENV) or None
    args = tool.endpoint_args(model, kind, args, base_url, seconds)
    return Endpoint(model, kind, args, base_url, origin, seconds, key)
