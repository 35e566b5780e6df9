"""Deterministic name rules: one source's model name -> (base, snapshot date, setting).

No fuzzy matching anywhere: every step below is an exact rewrite that a reviewer can read.

1. Pick the field that names the model per source (its `name_field`, `pipelines.sources`
   `NAME_FIELD`): Aider's key is a run
   directory and Open LLM Leaderboard's key carries precision and a commit, so their display
   names are parsed; SWE-bench rows name agent *systems* and only the per-model mini-swe-agent
   runs are placed, from their `Model:` tag. A row whose parser found that the display name, not
   the key, names its model says so in `extra["identity_from"]` (`IDENTITY_FROM`). Where a
   display name adds a date or setting to an API-id key (`display_field`: LiveCodeBench's
   `Claude-3.7-Sonnet (Thinking)` for `claude-3-7-sonnet-20250219`), both are read.
2. Drop footnote markers; a name joining two models (`o3 (high) + gpt-4.1`, `R1 + Sonnet`) is an
   ensemble and is not placed.
3. Parenthesised parts are classified: a date (`(20250514)`, `(2025-08-07)`, `(Aug 2024)`,
   `(25/07)` year/month, `(05/28)` month/day, `(08-24)` month-year), a setting (`(32k thinking)`,
   `(High)`, `(no think)`, `(Thinking, 16K)`), an edit format or precision (ignored: they are
   columns of their own), anything else stays part of the name.
4. Lower case; `_`, spaces and `:` become `-`; `Command R+` -> `command-r-plus`; inference
   provider prefixes (`chutes/`, `fireworks/`, `openrouter/`, `ollama/` ...) and the vendor's own
   organisation (`Qwen/`, `moonshotai/`, `meta-llama/` ...) are dropped, any other organisation is
   kept (`nousresearch/hermes-3-llama-3.1-405b`); provider suffixes (`-bedrock`, `-openrouter`,
   `-together`) and serving precisions (`-fp8`, `-bf16`) are dropped.
5. Setting suffixes are read from the right in the source's grammar (`SUFFIX_RULES`).
6. A trailing full date (`-20250514`, `-2025-08-07`) is the snapshot.
7. Family rules fix word order and dots vs dashes (`claude-4-sonnet` -> `claude-sonnet-4`,
   `claude-opus-4-5` -> `claude-opus-4.5`, `gpt-4-5` -> `gpt-4.5`, `gemini-2-5-pro` ->
   `gemini-2.5-pro`, `kimi-k2p5` -> `kimi-k2.5`, `llama3.1` -> `llama-3.1`,
   `qwen-2.5` -> `qwen2.5`).

The result is looked up in the reviewed catalogue (`models.csv`, see `catalogue.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipelines.identity.settings import EFFORT_WORDS, Setting, budget_token, parse_setting_text

# ------------------------------------------------------------------------------- vocabulary
# Inference providers / hosts: never part of a model's identity.
PROVIDER_PREFIXES = frozenset(
    {
        "chutes",
        "fireworks",
        "fireworks-ai",
        "deepinfra",
        "openrouter",
        "together",
        "togetherai",
        "ollama",
        "parasail",
        "novita",
        "groq",
        "bedrock",
        "vertex",
        "azure",
        "hyperbolic",
        "nebius",
        "litellm",
    }
)
# The vendor's own organisation on Hugging Face / in API paths: dropping it merges nothing that
# is not the same model (the vendor publishes one repo per name).
VENDOR_ORGS = frozenset(
    {
        "openai",
        "anthropic",
        "google",
        "deepseek",
        "deepseek-ai",
        "qwen",
        "alibaba",
        "moonshotai",
        "moonshot",
        "zai-org",
        "thudm",
        "zhipuai",
        "meta-llama",
        "meta",
        "facebook",
        "mistralai",
        "mistral",
        "microsoft",
        "01-ai",
        "tiiuae",
        "nvidia",
        "ibm-granite",
        "ibm",
        "xai",
        "x-ai",
        "cohere",
        "cohereforai",
        "coherelabs",
        "databricks",
        "bigcode",
        "minimaxai",
        "minimax",
        "amazon",
        "allenai",
        "internlm",
        "stabilityai",
        "huggingfaceh4",
        "huggingfacetb",
        "ai21labs",
        "snowflake",
        "upstage",
        "openbmb",
        "baichuan-inc",
        "eleutherai",
    }
)
PROVIDER_SUFFIXES = ("bedrock", "openrouter", "together", "vertex", "fireworks", "novita")
PRECISION_WORDS = frozenset({"fp8", "bf16", "fp16", "fp32", "float16", "bfloat16", "int8", "awq"})
EDIT_FORMATS = frozenset({"diff", "whole", "udiff", "diff-fenced", "architect", "editor-diff"})
NOISE_WORDS = frozenset({"official", "novita", "api", "alibaba api", "t=1", "refine."})
_QUANT = re.compile(r"^(q\d(?:[_-]k)?(?:[_-][a-z0-9]+)?|gguf|iq\d\w*)$")

MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ]
    )
    for m in names
}

# Which field names the model is the source's `name_field` (default: model_key; `NAME_FIELD` in
# `pipelines.sources`). A row may override its source's field: `extra["identity_from"] ==
# "model_name"` says the display name, not the key, names the model of that row (Epoch AI rows
# whose `Name` contradicts their `Model version`: `DeepSeek-V3 Base` filed under `DeepSeek-V3`).
IDENTITY_FROM = "identity_from"
# Where a display name states the snapshot date or setting next to an API-id key (the source's
# `display_field`, `DISPLAY_FIELD`), the key is parsed and the display name's date and setting
# fill what the key does not state (SWE-bench's per-model runs do the same from their `Model:`
# tag). LiveCodeBench keys `claude-3-7-sonnet-20250219` and shows `Claude-3.7-Sonnet (Thinking)`.


# ----------------------------------------------------------------------------- the result
@dataclass(frozen=True)
class ParsedName:
    text: str  # the string that was parsed
    base: str | None  # normalised base name; None = not a placeable model
    date: str | None = None  # YYYY-MM-DD or YYYY-MM
    setting: Setting = field(default_factory=Setting)
    full: str | None = None  # normalised name before setting suffixes were read (model names
    # such as `kimi-k2-thinking` end in a setting word; the catalogue decides)
    reason: str | None = None  # why base is None


# ------------------------------------------------------------------------- small parsers
def _date_from_text(text: str) -> tuple[str | None, str | None]:
    """(date, short code) from a parenthesised date; (None, None) when it is not one."""
    t = text.strip().lower().replace(",", " ")
    if m := re.fullmatch(r"(20\d\d)(\d\d)(\d\d)", t):
        return f"{m[1]}-{m[2]}-{m[3]}", None
    if m := re.fullmatch(r"(20\d\d)-(\d\d)-(\d\d)", t):
        return f"{m[1]}-{m[2]}-{m[3]}", None
    if m := re.fullmatch(r"([a-z]+)\.?\s+(20\d\d)", t):
        month = MONTHS.get(m[1])
        return (f"{m[2]}-{month:02d}", None) if month else (None, None)
    if m := re.fullmatch(r"(\d\d)/(\d\d)", t):
        a, b = int(m[1]), int(m[2])
        if a > 12 and 1 <= b <= 12:  # YY/MM: (25/07) -> code 2507
            return None, f"{m[1]}{m[2]}"
        if 1 <= a <= 12 and b > 12:  # MM/DD: (05/28) -> code 0528
            return None, f"{m[1]}{m[2]}"
        return None, None
    if m := re.fullmatch(r"(\d\d)-(20\d\d)", t):  # MM-YYYY (Command R (08-2024))
        return None, f"{m[1]}-{m[2]}"
    if (m := re.fullmatch(r"(\d\d)-(\d\d)", t)) and 1 <= int(m[1]) <= 12:
        return None, f"{m[1]}-20{m[2]}"  # MM-YY (Command R+ (08-24))
    if re.fullmatch(r"\d{4}", t):  # MMDD or YYMM code
        return None, t
    return None, None


_PAREN = re.compile(r"\(([^()]*)\)")


def _split_parentheses(text: str) -> tuple[str, list[str]]:
    parts = _PAREN.findall(text)
    return _PAREN.sub(" ", text), parts


def _tokenize(text: str) -> str:
    t = text.strip().lower()
    t = t.replace("β", "beta").replace("·", "-")
    t = re.sub(r"(?<=[a-z0-9])\+(?=$|[\s\-_])", "-plus", t)  # Command R+ -> command-r-plus
    t = re.sub(r"(?<=[a-z0-9])\+(?=[a-z0-9])", "-plus-", t)  # CodeT5+-16B handled above
    t = re.sub(r"[\s_:]+", "-", t)
    t = re.sub(r"[^a-z0-9.\-/]+", "-", t)
    t = re.sub(r"-{2,}", "-", t)
    return t.strip("-./")


def _strip_org(text: str) -> str:
    parts = [p for p in text.split("/") if p]
    while len(parts) > 1 and parts[0] in PROVIDER_PREFIXES | VENDOR_ORGS:
        parts = parts[1:]
    # a provider glued on with a dash: `parasail-qwen3-235b-...`
    head, sep, rest = parts[-1].partition("-") if parts else ("", "", "")
    if sep and rest and head in PROVIDER_PREFIXES and len(parts) == 1:
        parts = [rest]
    return "/".join(parts)


def _strip_suffixes(text: str) -> tuple[str, str | None]:
    """Provider suffixes and serving precisions dropped; a quantisation tag returned."""
    quant = None
    changed = True
    while changed:
        changed = False
        for suffix in PROVIDER_SUFFIXES:
            if text.endswith("-" + suffix):
                text, changed = text[: -len(suffix) - 1], True
        head, _, last = text.rpartition("-")
        if head and last in PRECISION_WORDS:
            text, changed = head, True
            continue
        if head and _QUANT.match(last):
            quant, text, changed = last.replace("-", "_"), head, True
            continue
        # q4_K_M arrives as `q4-k-m` after tokenising
        if m := re.search(r"-(q\d-k-[a-z0-9]+|q\d-[0-9]+)$", text):
            quant = m[1].replace("-", "_")
            text, changed = text[: m.start()], True
    return text, quant


# --------------------------------------------------------------- setting suffix grammars
@dataclass(frozen=True)
class _Suffix:
    pattern: re.Pattern[str]
    apply: object  # Callable[[re.Match, Setting], Setting]


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(r"(?:^|-)" + pattern + r"$")


def _effort(match: re.Match[str], s: Setting) -> Setting:
    return s.with_effort(EFFORT_WORDS[match["effort"]])


def _budget(match: re.Match[str], s: Setting) -> Setting:
    return s.with_thinking(budget_token(match["budget"]) or "on")


def _on(_: re.Match[str], s: Setting) -> Setting:
    return s.with_thinking("on")


def _off(_: re.Match[str], s: Setting) -> Setting:
    return s.with_thinking("off")


def _auto(_: re.Match[str], s: Setting) -> Setting:
    return s.with_thinking("auto")


def _high_thinking(_: re.Match[str], s: Setting) -> Setting:
    return s.with_thinking("on").with_effort("high")


_EFFORT = r"(?P<effort>minimal|low|medium|high|xhigh|none)"
_BUDGETRX = r"(?P<budget>\d+k)"

COMMON_SUFFIXES: tuple[_Suffix, ...] = (
    _Suffix(_rx(r"(?P<effort>minimal|low|medium|high|xhigh|max)-effort"), _effort),
    _Suffix(_rx(r"thinking-" + _BUDGETRX), _budget),
    _Suffix(_rx(r"thinking-auto"), _auto),
    _Suffix(_rx(r"(?:no-thinking|nothinking|non-thinking|no-think)"), _off),
    _Suffix(_rx(r"non-reasoning"), _off),
    _Suffix(_rx(r"highthinking"), _high_thinking),
    _Suffix(_rx(r"(?:thinking|reasoning|reasoner)"), _on),
    _Suffix(_rx(_EFFORT), _effort),
)
SUFFIX_RULES: dict[str, tuple[_Suffix, ...]] = {
    # LiveBench: `-base` is the thinking-off run of a model that also has `-thinking-64k`
    "livebench": (_Suffix(_rx(r"base"), _off), *COMMON_SUFFIXES),
    # Epoch: `_16K` budgets, `_unknown` (thinking on, budget not stated)
    "epoch_ai": (
        _Suffix(_rx(r"(?P<budget>\d+k)"), _budget),
        _Suffix(_rx(r"unknown"), _on),
        *COMMON_SUFFIXES,
    ),
    # ARC Prize: `-thinking-120K-high`, `-thinking-none`, `-max-effort`, `-thinking-high`
    "arc_prize": (
        _Suffix(_rx(r"thinking-(?P<effort>minimal|low|medium|high|xhigh|none)"), _effort),
        *COMMON_SUFFIXES,
    ),
}


# Size words that look like efforts: `mistral-medium`, `magistral-medium`, `phi-3-medium`.
_SIZED_FAMILY = re.compile(
    r"(?:^|-)(?:mistral|magistral|devstral|pixtral|codestral|phi-\d(?:\.\d)?)$"
)


def _read_suffixes(
    source: str, text: str, setting: Setting, allow_max: bool
) -> tuple[str, Setting]:
    rules = SUFFIX_RULES.get(source, COMMON_SUFFIXES)
    while True:
        for rule in rules:
            match = rule.pattern.search(text)
            if (
                match
                and match.start() > 0
                and not (
                    "effort" in match.groupdict() and _SIZED_FAMILY.search(text[: match.start()])
                )
            ):
                text = text[: match.start()]
                setting = rule.apply(match, setting)  # type: ignore[operator]
                break
        else:
            if allow_max and (m := re.search(r"-max$", text)) and m.start() > 0:
                text, setting = text[: m.start()], setting.with_effort("max")
                continue
            return text, setting


# ----------------------------------------------------------------------- family rules
_FAMILY_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), r)
    for p, r in (
        (
            r"^(?:openai|google|xai|x-ai|meta|mistralai|anthropic)-(?=gpt|o\d|gemini|gemma|grok|llama|claude|mistral|codestral)",
            "",
        ),
        (r"^anthropic-(opus|sonnet|haiku)-", r"claude-\1-"),
        (r"^anthropic-claude-", "claude-"),
        (r"^claude(\d)", r"claude-\1"),
        # claude-4-sonnet / claude-4.5-opus / claude-4-5-opus -> claude-sonnet-4 / claude-opus-4.5
        (r"^claude-([4-9])(?:[.-](\d))?-(opus|sonnet|haiku)(?=-|$)", r"claude-\3-\1.\2"),
        # claude-sonnet-3.5 -> claude-3.5-sonnet (Anthropic's own order for 3.x)
        (r"^claude-(opus|sonnet|haiku)-3(?:[.-](\d))?(?=-|$)", r"claude-3.\2-\1"),
        (r"^claude-(opus|sonnet|haiku)-(\d)-(\d)(?=-|$)", r"claude-\1-\2.\3"),
        (r"^claude-3-(\d)-(opus|sonnet|haiku)(?=-|$)", r"claude-3.\1-\2"),
        (r"^gpt-?(\d)-(\d)(?=-|$)", r"gpt-\1.\2"),
        (r"^gpt(\d)(?=[.o-]|$)", r"gpt-\1"),
        (r"^chatgpt-?4o", "chatgpt-4o"),
        (r"^gemini-(\d)-(\d)(?=-)", r"gemini-\1.\2"),
        (r"^grok-(\d)-(\d)(?=-|$)", r"grok-\1.\2"),
        (r"^grok-(\d)-(\d\d)(?=-beta)", r"grok-\1.\2"),
        (r"^grok(\d)", r"grok-\1"),
        (r"^(kimi-k\d)p(\d)", r"\1.\2"),
        (r"^(deepseek-v\d)p(\d)", r"\1.\2"),
        (r"^(glm-\d)p(\d)", r"\1.\2"),
        (r"^meta-llama-", "llama-"),
        (r"^llama(\d)", r"llama-\1"),
        (r"^qwen-(\d(?:\.\d)?)-", r"qwen\1-"),
        (r"^gemma(\d)", r"gemma-\1"),
        (r"^c4ai-", ""),
        (r"^(amazon-)?nova-(pro|lite|micro|premier)-v1(?:\.0|-0)?$", r"nova-\2"),
        (r"^amazon-nova-(pro|lite|micro|premier)(?:-1\.0)?$", r"nova-\1"),
        (r"^amazon\.nova-(pro|lite|micro|premier)-v1-0$", r"nova-\1"),
    )
)


def _family(text: str) -> str:
    for pattern, replacement in _FAMILY_RULES:
        text = pattern.sub(replacement, text)
    text = re.sub(r"\.(?=-|$)", "", text)  # claude-sonnet-4. (no minor) -> claude-sonnet-4
    return text


def normalise_base(text: str) -> str:
    """Lower-case, separators unified, family word order and version dots (no date, no
    settings): `Claude 4 Sonnet` -> `claude-sonnet-4`, `GPT-4.5` -> `gpt-4.5`."""
    return _family(_strip_org(_tokenize(text)))


# ------------------------------------------------------------------------------- parse
def parse_name(
    source: str,
    text: str | None,
    reasoning_effort: str | None = None,
    thinking_budget: str | None = None,
) -> ParsedName:
    """Parse one model name in `source`'s grammar (module docstring)."""
    if text is None or not str(text).strip():
        return ParsedName(text or "", None, reason="no model name")
    raw = str(text).strip()
    work = re.sub(r"[¹²³⁴*†‡]+", " ", raw).strip()
    if re.search(r"\s\+\s|\s&\s", work) or re.search(r"\bx\s", work.lower()):
        return ParsedName(raw, None, reason="names several models (ensemble or agent system)")

    work, parens = _split_parentheses(work)
    date: str | None = None
    codes: list[str] = []
    setting = Setting()
    extra_words: list[str] = []
    # Aider / LMArena free text after a comma: "Qwen3 235B A22B diff, no think, Alibaba API"
    if "," in work:
        head, *tails = work.split(",")
        work = head
        parens = [*parens, *tails]
    for part in parens:
        p = part.strip()
        if not p:
            continue
        low = p.lower()
        found_date, code = _date_from_text(p)
        if found_date:
            date = date or found_date
            continue
        if code:
            codes.append(code)
            continue
        if low in EDIT_FORMATS or low in PRECISION_WORDS or low in NOISE_WORDS:
            continue
        parsed = parse_setting_text(p)
        if parsed is not None:
            setting = setting.merge(parsed)
            continue
        extra_words.append(p)

    tokens = _tokenize(" ".join([work, *extra_words]))
    # edit-format words trailing a display name ("Qwen3 235B A22B diff")
    tokens = re.sub(r"-(diff|whole|udiff|diff-fenced)$", "", tokens)
    tokens = _strip_org(tokens)
    tokens, quant = _strip_suffixes(tokens)
    if quant:
        setting = setting.merge(Setting(quant=quant))
    full = _family(tokens)
    allow_max = tokens.startswith(("claude", "anthropic", "opus", "sonnet"))
    tokens, setting = _read_suffixes(source, tokens, setting, allow_max)
    tokens, quant = _strip_suffixes(tokens)
    if quant:
        setting = setting.merge(Setting(quant=quant))
    m = re.search(r"-(20\d\d)(\d\d)(\d\d)$", tokens) or re.search(
        r"-(20\d\d)-(\d\d)-(\d\d)$", tokens
    )
    if m:
        date = date or f"{m[1]}-{m[2]}-{m[3]}"
        tokens = tokens[: m.start()]
    # settings may sit before the date (`claude-opus-4-5-20251101-thinking-64k` is handled
    # above; `gpt-5-2-2025-12-11-thinking-high` too) or after it (`o3-2025-04-16-high`)
    tokens, setting = _read_suffixes(source, tokens, setting, allow_max)
    base = _family(tokens)
    for code in codes:
        if not re.search(r"-\d{3,4}$", base):
            base = f"{base}-{code}"
            full = f"{full}-{code}"
    column_setting = Setting(
        thinking=budget_token(thinking_budget),
        effort=EFFORT_WORDS.get(str(reasoning_effort).strip().lower())
        if reasoning_effort
        else None,
    )
    setting = setting.merge(column_setting)
    if not base:
        return ParsedName(raw, None, reason="nothing left after settings and dates")
    return ParsedName(raw, base, date, setting, full)
