"""The tool options `benchpress run` passes through to the harness (`--num-fewshot`,
`--batch-size`, `--apply-chat-template`, `--gen-kwargs`; the API's `num_fewshot=`, ...),
checked before anything runs, shown in the plan and recorded with each task's results (so a
re-run with other options runs the task again instead of resuming it).

They are lm-eval's `simple_evaluate` arguments of the same names; each harness translates
them to its own spelling or refuses one it has no equivalent of
(`ProbeTool.tool_options`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from predictor.harnesses.endpoint import SettingsError
from predictor.harnesses.tool import PASS_THROUGH
from predictor.runs.settings import format_model_args, parse_model_args, typed_value

FLAGS = {
    "num_fewshot": "--num-fewshot",
    "batch_size": "--batch-size",
    "apply_chat_template": "--apply-chat-template",
    "gen_kwargs": "--gen-kwargs",
}


def parse_batch_size(value: object) -> int | str:
    """`8` -> 8, `auto` / `auto:4` as lm-eval takes them; else `SettingsError`."""
    text = str(value).strip().lower()
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if text.isdigit() and int(text) > 0:
        return int(text)
    head, sep, tail = text.partition(":")
    if head == "auto" and (not sep or (tail.isdigit() and int(tail) > 0)):
        return text
    raise SettingsError(
        f"--batch-size: expected a positive whole number, 'auto' or 'auto:N', got {value!r}"
    )


def parse_gen_kwargs(value: str | Mapping[str, object]) -> dict[str, object]:
    """`"temperature=0,max_gen_toks=256"` -> {"temperature": 0, "max_gen_toks": 256}."""
    if isinstance(value, Mapping):
        out = {str(k): v for k, v in value.items()}
    else:
        try:
            parsed = parse_model_args(str(value))
        except SettingsError as error:
            raise SettingsError(str(error).replace("--model-args", "--gen-kwargs")) from None
        out = {k: typed_value(v) for k, v in parsed.items()}
    if not out:
        raise SettingsError("--gen-kwargs: expected key=value pairs, got nothing")
    return out


def run_options(
    num_fewshot: int | None = None,
    batch_size: int | str | None = None,
    apply_chat_template: bool | str | None = None,
    gen_kwargs: str | Mapping[str, object] | None = None,
) -> dict[str, Any]:
    """The options given (None: the tool's default, left out), each checked."""
    out: dict[str, Any] = {}
    if num_fewshot is not None:
        if isinstance(num_fewshot, bool) or not isinstance(num_fewshot, int) or num_fewshot < 0:
            raise SettingsError(f"--num-fewshot: expected a whole number >= 0, got {num_fewshot!r}")
        out["num_fewshot"] = num_fewshot
    if batch_size is not None:
        out["batch_size"] = parse_batch_size(batch_size)
    if apply_chat_template is not None and apply_chat_template is not False:
        if not isinstance(apply_chat_template, bool | str) or not str(apply_chat_template):
            raise SettingsError(
                "--apply-chat-template: expected true or a chat template's name, got "
                f"{apply_chat_template!r}"
            )
        out["apply_chat_template"] = apply_chat_template
    if gen_kwargs is not None:
        out["gen_kwargs"] = parse_gen_kwargs(gen_kwargs)
    return out


def split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the pass-through options, checked; the others, for the tool as they are)."""
    given = {k: options[k] for k in PASS_THROUGH if k in options}
    rest = {k: v for k, v in options.items() if k not in PASS_THROUGH}
    return run_options(**given), rest


def describe(options: Mapping[str, Any]) -> str:
    """The options as the plan shows them: `--num-fewshot 0 --gen-kwargs temperature=0`."""
    parts = []
    for key in PASS_THROUGH:
        if key not in options:
            continue
        value = options[key]
        if key == "gen_kwargs":
            value = format_model_args(value)
        parts.append(FLAGS[key] if value is True else f"{FLAGS[key]} {value}")
    return " ".join(parts)
