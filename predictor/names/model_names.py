"""Model names as evaluation tools write them, read by reviewed rules (never a fuzzy guess).

lm-evaluation-harness, Inspect, OpenRouter, HELM and Every Eval Ever name a public model with
its provider, router or runner in front (`openai/gpt-4o`, `openrouter/anthropic/claude-sonnet-4`,
`hf/meta-llama/Meta-Llama-3.1-8B-Instruct`, `pretrained=Qwen/Qwen3-32B,dtype=bfloat16`), and
teams name their own models after a base (`qwen3-32b-sft-v2`, `Llama-3.1-8B-Instruct-Q4_K_M`).
Two pure functions read such names; neither needs a snapshot.

`public_candidates(name)`: the spellings to look up, strictest first. Each step below that
changes the name adds one candidate; `NameResolver` tries them in order, after the name itself.

0. A training run's checkpoint folder (`outputs/qwen3-8b-sft/checkpoint-300`, `.../step_2000`,
   `.../global_step1000`, `.../iter_0001000`, `.../epoch-3`, or a number; also as lm-eval's
   `pretrained=`, after step 1): the run's folder, `outputs/qwen3-8b-sft`, read by the
   other rules (a base named in it gives the checkpoint its base's side information).
1. lm-eval model arguments: `pretrained=ORG/NAME,...` (also as lm-eval prints them,
   `hf (pretrained=...)`), else `model=NAME,...` (API models) -> the named model. With `peft=`
   or `delta=` the model is an adapter or a delta of `pretrained`, not `pretrained` itself:
   no candidates (`derived_base` names the base).
2. Runner and router prefixes (`RUNNERS`): Inspect's providers that serve another's model
   (`hf/`, `vllm/`, `sglang/`, `openrouter/`, `together/`, `groq/`, `fireworks/`, `azureai/`,
   `vertex/`, `bedrock/`, `ollama/`, `llama-cpp-python/`, ...), `openai-api/<provider>/` (two
   segments), `openai/azure/`, and LiteLLM's spellings (`together_ai/`, `vertex_ai/`, ...).
   Some runners spell the model their own way, each undone by its own rule:
   - `fireworks/`: `accounts/<account>/models/` dropped, `v3p1` / `2p5` -> `3.1` / `2.5`;
   - `bedrock/`: a region (`us.`), the provider (`anthropic.`) and the version
     (`-v1:0`) dropped;
   - `ollama/`: `name:tag` -> `name-tag` (`qwen3:32b` -> `qwen3-32b`), `:latest` dropped.
3. OpenRouter's routing variants `:free`, `:beta`, `:nitro`, `:floor`, `:extended`,
   `:online`, `:exacto` (`ROUTER_VARIANTS`) serve the same weights: dropped. `:thinking` is a
   setting: it becomes `@thinking` (the snapshot's setting separator), never dropped, so
   `claude-3.7-sonnet:thinking` never answers as `claude-3.7-sonnet`.
4. A provider or organisation (`PROVIDERS`: the labs and the hub organisations of their open
   models, as HELM, OpenRouter, Every Eval Ever and the Hugging Face hub write them):
   `openai/gpt-oss-120b` -> `gpt-oss-120b`, `Qwen/Qwen3-32B` -> `Qwen3-32B`. Only whole
   leading path segments are dropped, never part of the model's own name (`Meta-Llama-3.1`
   keeps its Llama, `deepseek-ai/DeepSeek-R1` its DeepSeek); an organisation not in the table
   (a user's, `TheBloke/`) is kept: its model is its own, not the public one.
5. The hub spelling, lower-cased, then (`HUB_REWRITES`): `meta-llama-3.1-8b-instruct` ->
   `llama-3.1-8b-instruct` (Meta's hub repos carry the company's name), Llama 2's
   Transformers conversions `-hf` dropped (`llama-2-7b-chat-hf`), and Anthropic's API
   versions `claude-3-5-sonnet` / `claude-sonnet-4-5` -> `claude-3.5-sonnet` /
   `claude-sonnet-4.5` (`claude-sonnet-4-0` -> `claude-sonnet-4`; a date is never dropped:
   a dated snapshot is its own model).

`derived_base(name)`: for a fine-tune, merge, quantisation or adapter of a base, (the base's
name, the derivation): suffixes of `DERIVATIONS` (`-sft`, `-sft-v2`, `-dpo`, `-lora`,
`-merged`, `-q4_k_m`, `-gguf`, `-awq`, `-bnb-4bit`, `-mlx`, ...) stripped repeatedly from the
end, `-finetuned-...` / `-ft-...` with everything after it, OpenAI's fine-tune ids
`ft:<base>:<org>:...`, lm-eval's `pretrained=<base>,peft=...` and a snapshot's quantisation
setting (`qwen2-72b-instruct@quant-q8_0`); another setting stays (`x-sft@thinking` ->
`x@thinking`). Words that are part of public model names are never stripped: `-instruct`,
`-it`, `-chat`, `-base`, `-preview`, dates, sizes, and `-distill`
(`deepseek-r1-distill-llama-70b` is a public model). The base is named without an
organisation (a known provider's is dropped as above; another is the deriver's:
`TheBloke/Llama-2-7B-Chat-GGUF` -> `Llama-2-7B-Chat`), except a base named as loaded
(`pretrained=<base>,peft=...`, `ft:<base>:...`), which is kept as written. Callers look the
name itself up first: a derivative the snapshot knows (`llama-3.1-tulu-3-8b-dpo`) is itself.
"""

from __future__ import annotations

import re

# Inspect providers, routers and local runners that serve a model named by its own
# organisation or spelling (lower case). `openai-api` takes a provider segment too.
RUNNERS = frozenset(
    {
        "openrouter",
        "hf",
        "hf-inference-providers",
        "huggingface",
        "vllm",
        "sglang",
        "transformer_lens",
        "llama-cpp-python",
        "ollama",
        "together",
        "together_ai",
        "groq",
        "fireworks",
        "fireworks_ai",
        "sambanova",
        "cf",
        "cloudflare",
        "deepinfra",
        "bedrock",
        "azureai",
        "azure",
        "azure_ai",
        "vertex",
        "vertex_ai",
        "litellm",
        "openai-api",
    }
)
_TWO_SEGMENT_RUNNERS = frozenset({"openai-api"})  # openai-api/<provider>/<model>
_SUB_RUNNERS = {"openai": frozenset({"azure"})}  # Inspect's openai/azure/<deployment>

# Labs and the hub organisations of their models, as the tools write them (lower case).
PROVIDERS = frozenset(
    {
        "01-ai",
        "ai21",
        "ai21labs",
        "alibaba",
        "allenai",
        "amazon",
        "anthropic",
        "arcee-ai",
        "baidu",
        "bigcode",
        "bytedance",
        "bytedance-seed",
        "cohere",
        "cohereforai",
        "coherelabs",
        "databricks",
        "deepseek",
        "deepseek-ai",
        "facebook",
        "gemini",
        "google",
        "google-deepmind",
        "grok",
        "huggingfaceh4",
        "huggingfacetb",
        "ibm",
        "ibm-granite",
        "inclusionai",
        "inflection",
        "internlm",
        "liquid",
        "liquidai",
        "meta",
        "meta-llama",
        "microsoft",
        "minimax",
        "minimaxai",
        "mistral",
        "mistralai",
        "moonshotai",
        "nousresearch",
        "nvidia",
        "openai",
        "openbmb",
        "perplexity",
        "qwen",
        "snowflake",
        "stepfun-ai",
        "tencent",
        "thudm",
        "tiiuae",
        "upstage",
        "writer",
        "x-ai",
        "xai",
        "z-ai",
        "zai-org",
    }
)

# OpenRouter variants that route the same weights differently; `:thinking` is a setting.
ROUTER_VARIANTS = frozenset({"free", "beta", "nitro", "floor", "extended", "online", "exacto"})
SETTING_VARIANTS = frozenset({"thinking"})

# (pattern, replacement) on the lower-cased bare name (before any "@setting").
HUB_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^meta-llama-(?=\d)"), "llama-"),  # Meta-Llama-3.1-8B-Instruct
    (re.compile(r"^(llama-2-.+)-hf$"), r"\1"),  # meta-llama/Llama-2-7b-chat-hf
    (re.compile(r"^(claude-(?:[a-z]+-)?\d)-0(?=$|-\d{8}$)"), r"\1"),  # claude-sonnet-4-0
    (re.compile(r"^(claude-(?:[a-z]+-)?\d)-(\d)(?=$|-[a-z]|-\d{8}$)"), r"\1.\2"),  # 3-5, 4-5
)

_LM_EVAL_ARG = re.compile(r"(?:^|[\s(,])(pretrained|model|peft|delta)=([^,\s)]+)")
_OPENAI_FINE_TUNE = re.compile(r"^ft:([^:]+):")  # ft:gpt-4o-mini-2024-07-18:org:name:id
_BEDROCK_REGION = re.compile(r"^(?:us|eu|apac|us-gov|global)\.")
_BEDROCK_PROVIDER = re.compile(
    r"^(?:anthropic|meta|amazon|mistral|cohere|ai21|deepseek|qwen|openai|writer)\."
)
_BEDROCK_VERSION = re.compile(r"-v\d+(?::\d+)?$")
_FIREWORKS_ACCOUNT = re.compile(r"^accounts/[^/]+/models/")
_FIREWORKS_VERSION = re.compile(r"(?<![\d.])(\d+)p(\d+)(?=-|$)")  # v3p1, qwen2p5, glm-4p5
_FIREWORKS_LLAMA = re.compile(r"^llama-v(?=\d)")  # llama-v3p1-8b-instruct

_SEP = r"[-_.]"
_VERSION = r"(?:[-_.]?v\d+(?:\.\d+)*)?"  # of the derivation: -sft-v2, -dpo-v1.0, -dpov3.5
# Derivation suffixes, matched at the end of the name after a separator (case ignored).
DERIVATIONS: tuple[tuple[str, str], ...] = (
    (r"unsloth[-_]bnb[-_]\d+bit|bnb[-_]\d+bit|bnb", "quantisation"),
    (r"[2-8][-_]?bit|\d+(?:\.\d+)?bpw|i?q\d(?:_[a-z0-9]+)*", "quantisation"),
    (r"gguf|ggml|awq|gptq|exl2|mlx|nf4|qat|int[48]|w[48]a(?:8|16)", "quantisation"),
    (r"fp8(?:[-_]dynamic)?|fp4|nvfp4|mxfp4|fp16|bf16|f16", "quantisation"),
    (rf"(?:sft|dpo|orpo|kto|cpo|simpo|rlhf|rlaif|grpo|ppo){_VERSION}", "fine-tune"),
    (r"q?lora|dora|adapters?|peft", "adapter"),
    (r"merged?|slerp|ties|dare", "merge"),
)
_DERIVED = re.compile(  # one pass: group d<i> is DERIVATIONS[i]
    "|".join(rf"{_SEP}(?P<d{i}>{pattern})$" for i, (pattern, _) in enumerate(DERIVATIONS)),
    re.IGNORECASE,
)
_DERIVED_WORD = {f"d{i}": word for i, (_, word) in enumerate(DERIVATIONS)}
# A fine-tune named by what it was tuned on: everything from the first such word on.
_FINE_TUNED = re.compile(rf"{_SEP}(?:finetuned|fine[-_]tuned|finetune|ft)(?:{_SEP}.*)?$", re.I)


def _unique(names: list[str]) -> list[str]:
    return list(dict.fromkeys(n for n in names if n))


def _lm_eval_args(name: str) -> dict[str, str]:
    """key -> value of lm-eval model arguments in `name` ({} when it holds none)."""
    if "=" not in name:
        return {}
    return {key: value for key, value in _LM_EVAL_ARG.findall(name)}


def _unwrap_runner(name: str) -> str | None:
    """`name` without its leading runner (with that runner's own spelling undone), or None."""
    head, sep, rest = name.partition("/")
    runner = head.lower()
    if not sep or not rest:
        return None
    if runner in _SUB_RUNNERS:
        sub, sep2, inner = rest.partition("/")
        if sep2 and inner and sub.lower() in _SUB_RUNNERS[runner]:
            return inner
        return None
    if runner not in RUNNERS:
        return None
    if runner in _TWO_SEGMENT_RUNNERS:
        rest = rest.partition("/")[2]
        return rest or None
    if runner in ("fireworks", "fireworks_ai"):
        rest = _FIREWORKS_ACCOUNT.sub("", rest)
        rest = _FIREWORKS_LLAMA.sub("llama-", _FIREWORKS_VERSION.sub(r"\1.\2", rest.lower()))
    elif runner == "bedrock":
        rest = _BEDROCK_VERSION.sub("", _BEDROCK_PROVIDER.sub("", _BEDROCK_REGION.sub("", rest)))
    elif runner == "ollama":
        stem, colon, tag = rest.partition(":")
        rest = stem if not colon or tag == "latest" else f"{stem}-{tag}"
    return rest


def _variant(name: str) -> str | None:
    """`name` with an OpenRouter variant read (`:free` dropped, `:thinking` -> `@thinking`)."""
    stem, colon, variant = name.rpartition(":")
    if not colon or not stem or "/" in variant:
        return None
    if variant.lower() in ROUTER_VARIANTS:
        return stem
    if variant.lower() in SETTING_VARIANTS:
        return f"{stem}@{variant.lower()}"
    return None


# the last folder of a training run's saved state: Hugging Face Trainer's `checkpoint-300`,
# `step-500`, `global_step1000` (DeepSpeed), `iter_0001000` (Megatron), `epoch-3`, `ckpt-12`
_CHECKPOINT_FOLDER = re.compile(
    r"^(?:checkpoint|ckpt|step|global[-_]?step|iter|iteration|epoch)[-_]?\d+$|^\d+$", re.I
)


def _without_trailing_slash(name: str) -> str | None:
    """A folder's path without its trailing slash (`/models/qwen3-8b/`)."""
    trimmed = name.rstrip("/")
    return trimmed if trimmed and trimmed != name else None


def _without_checkpoint(name: str) -> str | None:
    """A checkpoint folder's path without its last part: `outputs/qwen3-8b-sft/checkpoint-300`
    -> `outputs/qwen3-8b-sft`, the run, whose name says which model is being tuned."""
    stem, slash, last = name.rpartition("/")
    if not slash or not stem or not _CHECKPOINT_FOLDER.match(last):
        return None
    return stem


def _without_provider(name: str) -> str | None:
    head, sep, rest = name.partition("/")
    if sep and rest and head.lower() in PROVIDERS:
        return rest
    return None


def _hub_spellings(name: str) -> list[str]:
    """The lower-cased spelling, then each reviewed rewrite of it (the setting kept)."""
    stem, at, setting = name.lower().partition("@")
    spelt = [stem]
    for pattern, replacement in HUB_REWRITES:
        stem = pattern.sub(replacement, stem)
        spelt.append(stem)
    return [f"{s}{at}{setting}" for s in spelt]


def _unwrapped(name: str) -> list[str]:
    """`name` and each spelling the steps 1-4 of the module doc give, in order; [] for lm-eval
    arguments of an adapter or a delta (a derivative of `pretrained`, not it)."""
    text = name.strip()
    steps = [text]
    args = _lm_eval_args(text)
    if "peft" in args or "delta" in args:
        return []
    if "pretrained" in args or "model" in args:
        text = args.get("pretrained") or args["model"]
        steps.append(text)
    while True:  # runners, variants and providers, outside in: openrouter/openai/x:free
        step = (
            _without_trailing_slash(text)
            or _without_checkpoint(text)
            or _unwrap_runner(text)
            or _variant(text)
            or _without_provider(text)
        )
        if step is None or step == text:
            return steps
        text = step
        steps.append(text)


def public_candidates(name: str) -> list[str]:
    """The spellings of a model `name` as a tool wrote it to look up, strictest first: the
    name itself, then each reviewed unwrapping and rewrite of it (the module doc). A name
    that no rule reads gives `[name]`."""
    steps = _unwrapped(name)
    if not steps:
        return [name]
    last = steps[-1]
    bare = "/" not in last.partition("@")[0]  # an organisation not in PROVIDERS: its own model
    return _unique([name, *steps, *(_hub_spellings(last) if bare else [])])


def _strip_derivations(model: str) -> tuple[str, list[str]]:
    """`model` without its derivation suffixes, and the derivations, innermost first."""
    words: list[str] = []
    while True:
        if (found := _FINE_TUNED.search(model)) and found.start() > 0:
            model, words = model[: found.start()], ["fine-tune", *words]
            continue
        found = _DERIVED.search(model)
        if found is None or found.start() == 0:
            return model, words
        model, words = model[: found.start()], [_DERIVED_WORD[str(found.lastgroup)], *words]


def derived_base(name: str) -> tuple[str, str] | None:
    """(the base's name, the derivation) for a fine-tune, merge, quantisation or adapter of a
    base named in `name`, else None. Several derivations are joined by "+", innermost
    first: `qwen3-32b-sft-v2-q4_k_m` -> (`qwen3-32b`, `fine-tune+quantisation`). The base is
    as spelt in `name` (see the module doc for its organisation); resolve it like any name."""
    text = name.strip()
    outer: list[str] = []
    loaded = False  # the base as the tool loaded it: keep its organisation
    args = _lm_eval_args(text)
    if "pretrained" in args and ("peft" in args or "delta" in args):
        text, loaded = args["pretrained"], True
        outer.append("adapter" if "peft" in args else "fine-tune")
    elif found := _OPENAI_FINE_TUNE.match(text):
        text, loaded = found.group(1), True
        outer.append("fine-tune")
    else:  # a known provider's organisation is dropped here; one left is the deriver's
        text = (_unwrapped(text) or [text])[-1]
    org, slash, model = text.rpartition("/")
    model, at, setting = model.partition("@")
    if setting.lower().startswith("quant"):  # a snapshot's own `qwen2-72b-instruct@quant-q8_0`
        outer.insert(0, "quantisation")
        at = setting = ""
    base, words = _strip_derivations(model)
    words = [*words, *outer]
    if not words:
        return None
    named = f"{org}/{base}" if slash and loaded and base == model else base
    return f"{named}{at}{setting}", "+".join(dict.fromkeys(words))
