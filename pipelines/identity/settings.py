"""Settings (reasoning effort, thinking mode/budget, quantisation) and their canonical spelling.

A model's identity is (base model, snapshot, setting). Every source spells the setting its own
way (`-thinking-64k-high-effort`, `_32K`, `(32k thinking)`, `__high`, `(High)`, `-highthinking`,
`-nothinking`, `-base`, `_unknown` ...); the parsers in `rules.py` reduce them to a `Setting`, and
`Setting.canonical()` spells it in one grammar:

    setting   := thinking ["-" effort] ["-" quant] | effort ["-" quant] | quant
    thinking  := "nothinking" | "thinking" | "thinking-" budget | "thinking-auto"
    budget    := <n> "k"                       (thousands of tokens: 32000, 32768, 32K -> 32k)
    effort    := "minimal" | "low" | "medium" | "high" | "xhigh" | "max"
    quant     := "quant-" <tag>                (a quantised local run: quant-q8_0, quant-q4_k_m)

Reductions (so one setting has one spelling):
- thinking switched on without a stated budget next to an effort is the effort alone
  (`GPT-5.1 (Thinking, High)` == `gpt-5.1 (high)`: `high`); a budget or adaptive (`auto`)
  thinking is kept (`thinking-64k-high`, `thinking-auto-high`).
- effort `none` is thinking switched off (`gpt-5.1 none` == `nothinking`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

EFFORTS = ("minimal", "low", "medium", "high", "xhigh", "max")
EFFORT_WORDS = {
    "minimal": "minimal",
    "min": "minimal",
    "low": "low",
    "med": "medium",
    "medium": "medium",
    "high": "high",
    "hard": "high",
    "xhigh": "xhigh",
    "x-high": "xhigh",
    "extra-high": "xhigh",
    "max": "max",
    "maximum": "max",
    "none": "none",
}

_BUDGET = re.compile(r"^(\d+(?:\.\d+)?)\s*([kK])?$")


def budget_token(raw: object) -> str | None:
    """`32000`, `32768`, `32K`, `32k`, `59K` -> `32k`/`59k`; `0` -> `off`; `auto` -> `auto`."""
    if raw is None:
        return None
    text = str(raw).strip().lower()
    if not text:
        return None
    if text in {"auto", "adaptive", "dynamic"}:
        return "auto"
    if text in {"unknown", "default", "on"}:
        return "on"
    match = _BUDGET.match(text)
    if not match:
        return None
    number = float(match.group(1))
    if match.group(2):
        thousands = number
    elif number == 0:
        return "off"
    elif number % 1024 == 0:
        thousands = number / 1024
    else:
        thousands = number / 1000
    return f"{round(thousands)}k"


@dataclass(frozen=True)
class Setting:
    """What a row says about how the model was run (None = not stated)."""

    thinking: str | None = None  # "on" | "off" | "auto" | "<n>k"
    effort: str | None = None  # one of EFFORTS, or "none"
    quant: str | None = None  # q8_0, q4_k_m, ...

    def merge(self, other: Setting) -> Setting:
        """Fill what this setting does not state from `other` (the name wins over columns)."""
        return Setting(
            self.thinking or other.thinking,
            self.effort or other.effort,
            self.quant or other.quant,
        )

    def with_thinking(self, value: str) -> Setting:
        return self if self.thinking else replace(self, thinking=value)

    def with_effort(self, value: str) -> Setting:
        return self if self.effort else replace(self, effort=value)

    @property
    def stated(self) -> bool:
        return bool(self.thinking or self.effort or self.quant)

    def canonical(self) -> str | None:
        """The one spelling of this setting (module docstring), None when nothing is stated."""
        thinking, effort = self.thinking, self.effort
        if effort == "none":
            thinking, effort = "off", None
        parts: list[str] = []
        if thinking == "off":
            parts.append("nothinking")
            if effort:
                parts.append(effort)
        elif thinking == "on":
            parts.append(effort or "thinking")
        elif thinking == "auto":
            parts.append("thinking-auto")
            if effort:
                parts.append(effort)
        elif thinking:
            parts.append(f"thinking-{thinking}")
            if effort:
                parts.append(effort)
        elif effort:
            parts.append(effort)
        if self.quant:
            parts.append(f"quant-{self.quant}")
        return "-".join(parts) or None


def parse_setting_text(text: str) -> Setting | None:
    """A free-text setting such as `32k thinking`, `no think`, `Thinking, 16K`, `120K, High`,
    `medium reasoning`, `thinking-32k`, `High`, `default think`; None when it is not one."""
    words = [w for w in re.split(r"[\s,_]+", text.strip().lower()) if w]
    if not words:
        return None
    thinking: str | None = None
    effort: str | None = None
    known = 0
    i = 0
    while i < len(words):
        word = words[i]
        if word in {"no", "non", "without", "w/o"} and i + 1 < len(words):
            nxt = words[i + 1]
            if nxt.startswith(("think", "reason")):
                thinking, known, i = "off", known + 2, i + 2
                continue
        if word in {"nothinking", "no-thinking", "no-think", "non-thinking", "non-reasoning"}:
            thinking, known = "off", known + 1
        elif word in {"thinking", "think", "reasoning", "reasoner", "extended"} or word.startswith(
            "thinking-"
        ):
            suffix = word.removeprefix("thinking-") if word.startswith("thinking-") else ""
            budget = budget_token(suffix) if suffix else None
            if budget and budget not in {"off"}:
                thinking = budget
            elif suffix in EFFORT_WORDS:
                effort = EFFORT_WORDS[suffix]
                thinking = thinking or "on"
            elif thinking is None:
                thinking = "on"
            known += 1
        elif word in {"tokens", "budget", "effort", "mode", "default"}:
            known += 1
        elif word in EFFORT_WORDS:
            effort, known = EFFORT_WORDS[word], known + 1
        elif budget_token(word) not in {None, "off", "on"} and re.search(r"\d", word):
            thinking, known = budget_token(word), known + 1
        elif word == "chat":
            thinking, known = "off", known + 1
        else:
            return None
        i += 1
    if not known:
        return None
    if thinking is None and effort is None:
        # "default", "default think", "(thinking)" without budget -> thinking on
        thinking = "on" if any(w.startswith("think") for w in words) else None
        if thinking is None:
            return Setting()
    return Setting(thinking=thinking, effort=effort)
