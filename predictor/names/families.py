"""Which models belong together: a deterministic family name from a model id.

Rows of a score matrix are often settings of one base model (`o3-high`, `o3@medium`),
snapshots of one line (`gpt-4o`, `gpt-4o-0513`) or sizes and tiers of one release
(`qwen3-8b`, `qwen3-32b`; `claude-opus-4.5`, `claude-sonnet-4.5`). The completion method can
draw the model vectors of one family around a shared mean (`predictor.methods.hierarchy`).
The grouping is read off the id alone, by fixed rules, so it needs no catalogue and gives the
same answer for the paper matrix, a published snapshot and a user's own model name:

- `base`: drop the setting (`@...`, or a trailing reasoning-effort word such as `-high`), a
  date or snapshot suffix (`-0528`, `-20240806`, `-09-2025`) and release-stage words
  (`preview`, `exp`, `beta`);
- `line` (the default): the base, then also sizes (`-8b`, `-a22b`, `-8x7b`, `-4k`), tiers
  (`mini`, `nano`, `pro`, `flash`, `haiku`, `sonnet`, `opus`, ...) and tuning words
  (`instruct`, `it`, `chat`, `thinking`), with `qwen-2.5` and `qwen2.5` spelled alike.

A name is first read as its public model (`predictor.names.model_names`): a provider, router or
runner prefix and the hub spelling give the bare name's family (`openai/gpt-oss-120b`,
`meta-llama/Meta-Llama-3.1-8B-Instruct` are `gpt-oss-120b`, `llama-3.1-8b-instruct`), and a
fine-tune, merge, quantisation or adapter has its base's (`qwen3-32b-sft-v2-q4_k_m` is
`qwen3-32b`'s).

A family with one member is harmless: the prior then falls back to the population.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from predictor.names.model_names import derived_base, public_candidates

LEVELS = ("base", "line")

# Reasoning-effort and thinking settings written into an id (BenchPress's `o3-high`).
_SETTING_WORDS = frozenset(
    {"high", "low", "medium", "xhigh", "minimal", "nothinking", "default", "auto"}
)
_STAGE_WORDS = frozenset({"preview", "exp", "experimental", "beta", "latest", "hf", "litert"})
_TIER_WORDS = frozenset(
    {
        "mini",
        "nano",
        "pro",
        "flash",
        "lite",
        "plus",
        "max",
        "ultra",
        "turbo",
        "fast",
        "instant",
        "haiku",
        "sonnet",
        "opus",
        "codex",
        "coder",
        "code",
        "small",
        "medium",
        "large",
        "vision",
        "omni",
        "moe",
        "instruct",
        "it",
        "chat",
        "base",
        "thinking",
        "reasoning",
    }
)
_DATE = re.compile(r"^(\d{3}|\d{4}|\d{6}|\d{8})$")  # 002, 0528, 202405, 20240806
_MONTH = re.compile(r"^\d{2}$")  # the parts of 06-05 or 09-2025
_SIZE = re.compile(r"^(a|e)?\d+(\.\d+)?[bmk]$|^\d+x\d+(\.\d+)?b$")  # 8b, a22b, e2b, 4k, 8x7b
_VERSION_TAG = re.compile(r"^v0(\.\d+)+$")  # v0.1 of mistral-7b-v0.1 (not deepseek-v3)
_VENDOR_VERSION = re.compile(r"^([a-z]+)-(\d)")  # qwen-2.5 -> qwen2.5


@functools.lru_cache(maxsize=1 << 16)  # a matrix's ids are read again at every fit
def public_base(model_id: str) -> str:
    """The public model whose family `model_id` has: its bare spelling, then the base it is
    derived from, if any (see the module doc)."""
    name = public_candidates(model_id.strip())[-1]
    if (derived := derived_base(name)) is not None:
        name = public_candidates(derived[0])[-1]
    return name


def _base_tokens(model_id: str) -> list[str]:
    stem = public_base(model_id).lower().split("@", 1)[0]
    stem = stem.rsplit("/", 1)[-1]  # hub ids: org/name
    tokens = [t for t in re.split(r"[-_\s]+", stem) if t]
    while len(tokens) > 1 and (
        tokens[-1] in _SETTING_WORDS
        or tokens[-1] in _STAGE_WORDS
        or _DATE.match(tokens[-1])
        or _MONTH.match(tokens[-1])
    ):
        tokens.pop()
    return [t for t in tokens if t not in _STAGE_WORDS] or tokens[:1]


def model_family(model_id: str, level: str = "line") -> str:
    """The family name of `model_id` at `level` ("base" or "line"); see the module doc."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    tokens = _base_tokens(model_id)
    if level == "line":
        kept = [
            t
            for t in tokens
            if t not in _TIER_WORDS
            and not _SIZE.match(t)
            and not _VERSION_TAG.match(t)
            and not _DATE.match(t)
        ]
        tokens = kept or tokens[:1]
    return _VENDOR_VERSION.sub(r"\1\2", "-".join(tokens))


def model_families(model_ids: Iterable[str], level: str = "line") -> list[str]:
    """`model_family` of every id, in order."""
    return [model_family(m, level) for m in model_ids]
