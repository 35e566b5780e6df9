"""Model names as evaluation tools write them (`predictor.names.model_names`): provider, router and
runner prefixes, lm-eval's model arguments and hub spellings resolve as the bare name does on
the bundled snapshot; fine-tunes, merges, quantisations and adapters name their base."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from predictor import AmbiguousNameError, BenchPress, UnknownNameError
from predictor.names.families import model_family
from predictor.names.model_names import derived_base, public_candidates


@pytest.fixture(scope="module")
def bp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BenchPress]:
    """The bundled snapshot alone: BENCHPRESS_HOME is an empty folder."""
    home: Path = tmp_path_factory.mktemp("empty-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BENCHPRESS_HOME", str(home))
        yield BenchPress.load()


# (as a tool writes it, the bare name, the id both resolve to on the bundled snapshot)
TOOL_FORMS = [
    ("openai/gpt-4o", "gpt-4o", "gpt-4o"),  # Inspect, OpenRouter, HELM, Every Eval Ever
    ("anthropic/claude-sonnet-4", "claude-sonnet-4", "claude-sonnet-4"),
    ("google/gemini-2.5-pro", "gemini-2.5-pro", "gemini-2.5-pro"),
    ("openai/gpt-oss-120b", "gpt-oss-120b", "gpt-oss-120b"),  # OpenAI's open model on the hub
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct", "llama-3.1-8b"),
    (
        "pretrained=meta-llama/Meta-Llama-3.1-8B-Instruct,dtype=bfloat16",  # lm-eval model_args
        "llama-3.1-8b-instruct",
        "llama-3.1-8b",
    ),
    (
        "hf (pretrained=Qwen/Qwen2.5-72B-Instruct,dtype=auto), gen_kwargs: (None)",
        "qwen2.5-72b-instruct",
        "qwen2.5-72b-instruct",
    ),
    ("openrouter/openai/gpt-4o:free", "gpt-4o", "gpt-4o"),
    ("openrouter/anthropic/claude-sonnet-4", "claude-sonnet-4", "claude-sonnet-4"),
    (
        "openrouter/meta-llama/llama-3.3-70b-instruct:free",
        "llama-3.3-70b-instruct",
        "llama-3.3-70b-instruct",
    ),
    ("hf/meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b-instruct", "llama-3.3-70b-instruct"),
    (
        "vllm/mistralai/Mistral-7B-Instruct-v0.2",
        "mistral-7b-instruct-v0.2",
        "mistral-7b-instruct-v0.2",
    ),
    ("together/Qwen/Qwen2.5-72B-Instruct", "qwen2.5-72b-instruct", "qwen2.5-72b-instruct"),
    ("groq/openai/gpt-oss-120b", "gpt-oss-120b", "gpt-oss-120b"),
    ("hf/openai/gpt-oss-120b", "gpt-oss-120b", "gpt-oss-120b"),
    ("openai-api/deepseek/deepseek-r1", "deepseek-r1", "deepseek-r1"),
    ("openai/azure/gpt-4o", "gpt-4o", "gpt-4o"),
    ("vertex/gemini-2.5-pro", "gemini-2.5-pro", "gemini-2.5-pro"),
    ("azureai/Llama-3.3-70B-Instruct", "llama-3.3-70b-instruct", "llama-3.3-70b-instruct"),
    ("x-ai/grok-4", "grok-4", "grok-4"),
    ("deepseek-ai/DeepSeek-V3", "deepseek-v3", "deepseek-v3"),
    ("moonshotai/Kimi-K2-Instruct", "kimi-k2", "kimi-k2"),
    ("ollama/qwen3:32b", "qwen3-32b", "qwen3-32b"),
    (
        "fireworks/accounts/fireworks/models/llama-v3p1-8b-instruct",
        "llama-3.1-8b-instruct",
        "llama-3.1-8b",
    ),
    ("anthropic/claude-sonnet-4-0", "claude-sonnet-4", "claude-sonnet-4"),  # Anthropic's API id
    (
        "anthropic/claude-3-5-sonnet-20240620",
        "claude-3.5-sonnet-20240620",
        "claude-3.5-sonnet-20240620",
    ),
    (
        "openrouter/anthropic/claude-3.7-sonnet:thinking",  # a setting, never dropped
        "claude-3.7-sonnet@thinking",
        "claude-3.7-sonnet@thinking",
    ),
]


@pytest.mark.parametrize(("written", "bare", "model_id"), TOOL_FORMS)
def test_names_as_tools_write_them_resolve_as_the_bare_name(
    bp: BenchPress, written: str, bare: str, model_id: str
) -> None:
    assert bp.resolve_model(bare) == model_id
    assert bp.resolve_model(written) == model_id


def test_an_ambiguous_bare_name_stays_ambiguous_under_the_name_given(bp: BenchPress) -> None:
    with pytest.raises(AmbiguousNameError) as bare:
        bp.resolve_model("o3")
    with pytest.raises(AmbiguousNameError) as written:
        bp.resolve_model("openrouter/openai/o3")
    assert written.value.name == "openrouter/openai/o3"
    assert written.value.suggestions == bare.value.suggestions == ["o3-high", "o3@low", "o3@medium"]


def test_a_name_that_only_looks_similar_stays_unknown(bp: BenchPress) -> None:
    with pytest.raises(UnknownNameError) as unknown:
        bp.resolve_model("openai/gpt-4o-turbo-nonexistent")
    assert not isinstance(unknown.value, AmbiguousNameError)
    assert unknown.value.name == "openai/gpt-4o-turbo-nonexistent"
    assert str(unknown.value).startswith("unknown model 'openai/gpt-4o-turbo-nonexistent'")
    for name in ("TheBloke/gpt-4o", "openai/gpt-4o:nonsense", "qwen3-32b-sft-v2"):
        with pytest.raises(UnknownNameError):  # a user's org, an unknown variant, a fine-tune
            bp.resolve_model(name)


def test_benchmarks_are_not_read_as_tool_names(bp: BenchPress) -> None:
    assert bp.resolve_benchmark("gpqa_diamond") == "gpqa_diamond"
    with pytest.raises(UnknownNameError):
        bp.resolve_benchmark("openai/gpqa_diamond")


def test_ids_resolve_without_building_the_lookups(bp: BenchPress) -> None:
    resolver = type(bp.resolve_model)("model", ["gpt-4o"], bp.snapshot.aliases)
    assert resolver("gpt-4o") == "gpt-4o"
    assert "lookups" not in vars(resolver)


def test_public_candidates_strictest_first() -> None:
    assert public_candidates("gpt-4o") == ["gpt-4o"]
    assert public_candidates("openai/gpt-4o") == ["openai/gpt-4o", "gpt-4o"]
    assert public_candidates("openai/gpt-oss-120b") == ["openai/gpt-oss-120b", "gpt-oss-120b"]
    assert public_candidates("meta-llama/Meta-Llama-3.1-8B-Instruct") == [
        "meta-llama/Meta-Llama-3.1-8B-Instruct",
        "Meta-Llama-3.1-8B-Instruct",
        "meta-llama-3.1-8b-instruct",
        "llama-3.1-8b-instruct",
    ]
    assert public_candidates("pretrained=Qwen/Qwen2.5-72B-Instruct,dtype=bfloat16") == [
        "pretrained=Qwen/Qwen2.5-72B-Instruct,dtype=bfloat16",
        "Qwen/Qwen2.5-72B-Instruct",
        "Qwen2.5-72B-Instruct",
        "qwen2.5-72b-instruct",
    ]
    assert public_candidates("openrouter/openai/gpt-4o:free") == [
        "openrouter/openai/gpt-4o:free",
        "openai/gpt-4o:free",
        "openai/gpt-4o",
        "gpt-4o",
    ]
    assert public_candidates("anthropic/claude-3.7-sonnet:thinking") == [
        "anthropic/claude-3.7-sonnet:thinking",
        "anthropic/claude-3.7-sonnet@thinking",
        "claude-3.7-sonnet@thinking",
    ]
    assert public_candidates("bedrock/us.anthropic.claude-3-7-sonnet-20250219-v1:0") == [
        "bedrock/us.anthropic.claude-3-7-sonnet-20250219-v1:0",
        "claude-3-7-sonnet-20250219",
        "claude-3.7-sonnet-20250219",  # the date stays: a dated snapshot is its own model
    ]
    assert public_candidates("mistralai/Mistral-7B-Instruct-v0.2")[-1] == "mistral-7b-instruct-v0.2"
    assert public_candidates("hf/meta-llama/Llama-2-7b-chat-hf")[-1] == "llama-2-7b-chat"
    assert public_candidates("ollama/llama3.1:latest") == ["ollama/llama3.1:latest", "llama3.1"]
    # an organisation not in the table is a user's: its model is its own
    assert public_candidates("TheBloke/Llama-2-7B-Chat") == ["TheBloke/Llama-2-7B-Chat"]
    assert public_candidates("hf/TheBloke/Llama-2-7B-Chat") == [
        "hf/TheBloke/Llama-2-7B-Chat",
        "TheBloke/Llama-2-7B-Chat",
    ]
    # an adapter of `pretrained` is not `pretrained`
    assert public_candidates("pretrained=Qwen/Qwen3-32B,peft=me/adapter") == [
        "pretrained=Qwen/Qwen3-32B,peft=me/adapter"
    ]


@pytest.mark.parametrize(
    ("name", "derived"),
    [
        ("qwen3-32b-sft", ("qwen3-32b", "fine-tune")),
        ("qwen3-32b-sft-v2", ("qwen3-32b", "fine-tune")),
        ("qwen3-32b-sft-v2-q4_k_m", ("qwen3-32b", "fine-tune+quantisation")),
        ("llama-3.1-8b-instruct-dpo", ("llama-3.1-8b-instruct", "fine-tune")),
        ("qwen3-32b-orpo", ("qwen3-32b", "fine-tune")),
        ("qwen3-32b-kto", ("qwen3-32b", "fine-tune")),
        ("qwen3-32b-rlhf", ("qwen3-32b", "fine-tune")),
        ("qwen3-32b-grpo", ("qwen3-32b", "fine-tune")),
        ("qwen3-32b-lora", ("qwen3-32b", "adapter")),
        ("qwen3-32b-qlora", ("qwen3-32b", "adapter")),
        ("qwen3-32b-adapter", ("qwen3-32b", "adapter")),
        ("qwen3-32b-merged", ("qwen3-32b", "merge")),
        ("qwen3-32b-q8_0", ("qwen3-32b", "quantisation")),
        ("qwen3-32b-gguf", ("qwen3-32b", "quantisation")),
        ("Qwen/Qwen3-32B-AWQ", ("Qwen3-32B", "quantisation")),
        ("qwen3-32b-gptq-int4", ("qwen3-32b", "quantisation")),
        ("qwen3-32b-fp8", ("qwen3-32b", "quantisation")),
        ("unsloth/Llama-3.2-1B-Instruct-bnb-4bit", ("Llama-3.2-1B-Instruct", "quantisation")),
        ("mlx-community/Qwen3-32B-4bit", ("Qwen3-32B", "quantisation")),
        ("qwen3-32b-mlx", ("qwen3-32b", "quantisation")),
        ("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", ("Meta-Llama-3.1-8B-Instruct", "quantisation")),
        ("TheBloke/Llama-2-7B-Chat-GGUF", ("Llama-2-7B-Chat", "quantisation")),
        ("gemma-3-27b-it-qat-q4_0-gguf", ("gemma-3-27b-it", "quantisation")),
        ("acme/qwen3-32b-finetuned-x", ("qwen3-32b", "fine-tune")),
        ("llama-3.1-8b-instruct-ft-legal-v2", ("llama-3.1-8b-instruct", "fine-tune")),
        ("hf/acme/qwen3-32b-dpo", ("qwen3-32b", "fine-tune")),
        ("ft:gpt-4o-mini-2024-07-18:acme::abc123", ("gpt-4o-mini-2024-07-18", "fine-tune")),
        (
            "pretrained=meta-llama/Llama-3.1-8B-Instruct,peft=acme/adapter",
            ("meta-llama/Llama-3.1-8B-Instruct", "adapter"),
        ),
        ("qwen2-72b-instruct@quant-q8_0", ("qwen2-72b-instruct", "quantisation")),
        ("x-sft@thinking", ("x@thinking", "fine-tune")),
        # a training run's checkpoint folders: the run's name says what is tuned
        ("outputs/qwen3-8b-sft/checkpoint-300", ("qwen3-8b", "fine-tune")),
        (
            "/home/me/runs/llama-3.1-8b-instruct-dpo/step_2000",
            ("llama-3.1-8b-instruct", "fine-tune"),
        ),
        ("pretrained=out/qwen3-8b-sft/global_step1000,dtype=bfloat16", ("qwen3-8b", "fine-tune")),
        ("ckpts/qwen3-8b-grpo/iter_0001000/", ("qwen3-8b", "fine-tune")),
        # public names keep their words
        ("deepseek-r1-distill-llama-70b", None),
        ("llama-3.1-8b-instruct", None),
        ("gemma-3-27b-it", None),
        ("qwen2.5-72b-chat", None),
        ("llama-3-8b-base", None),
        ("gemini-2.5-flash-preview-09-2025", None),
        ("gpt-4o-20240806", None),
        ("qwen3-30b-a3b", None),
        ("openai/gpt-4o", None),
        ("openrouter/openai/gpt-4o:free", None),
        ("sft", None),
    ],
)
def test_derived_base(name: str, derived: tuple[str, str] | None) -> None:
    assert derived_base(name) == derived


@pytest.mark.parametrize(
    ("name", "same_as"),
    [
        ("qwen3-32b-sft-v2", "qwen3-32b"),
        ("qwen3-32b-sft-v2-q4_k_m", "qwen3-32b"),
        ("Qwen/Qwen3-32B-AWQ", "qwen3-32b"),
        ("acme/llama-3.1-8b-instruct-finetuned-x", "llama-3.1-8b-instruct"),
        ("openai/gpt-oss-120b", "gpt-oss-120b"),
        ("openrouter/openai/gpt-4o:free", "gpt-4o"),
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct"),
        ("pretrained=meta-llama/Meta-Llama-3.1-8B-Instruct,dtype=auto", "llama-3.1-8b-instruct"),
        ("anthropic/claude-3-5-sonnet-20240620", "claude-3.5-sonnet-20240620"),
        ("outputs/qwen3-8b-sft/checkpoint-300", "qwen3-8b"),
        ("/models/Qwen/Qwen3-8B/", "qwen3-8b"),
    ],
)
def test_families_of_derived_and_qualified_names_are_the_bare_base_s(
    name: str, same_as: str
) -> None:
    assert model_family(name, "base") == model_family(same_as, "base")
    assert model_family(name) == model_family(same_as)


def test_family_of_a_fine_tune_is_its_base_s() -> None:
    assert model_family("qwen3-32b-sft-v2") == "qwen3"
    assert model_family("qwen3-32b-sft-v2", "base") == "qwen3-32b"
    assert model_family("meta-llama/Meta-Llama-3.1-8B-Instruct") == "llama3.1"
    assert model_family("openai/gpt-oss-120b", "base") == "gpt-oss-120b"


@pytest.mark.parametrize(
    ("name", "family"),
    [
        (
            "team/run-a/checkpoint-300",
            "run-a",
        ),  # was "checkpoint": every run's checkpoints one family
        ("runs/my-model/epoch-3", "my-model"),
        ("results/step-500", "results"),
        ("checkpoint-300", "checkpoint"),  # no run folder named: nothing to read instead
        ("acme/model-7/", "model7"),  # was "": the empty name after the slash
    ],
)
def test_a_checkpoint_folder_has_its_run_s_family(name: str, family: str) -> None:
    assert model_family(name) == family


def test_a_fine_tuning_checkpoint_gets_its_base_s_side_information(bp: BenchPress) -> None:
    """lm-eval names a local checkpoint by its path: the base named in the run's folder gives
    the family and release date, as `qwen3-8b-sft` does (before: an unknown family
    `checkpoint` and a date inferred from the scores)."""
    probes = {"gpqa_diamond": 40, "mmlu_pro": 60}
    side = bp.predict(probes, model="outputs/qwen3-8b-sft/checkpoint-300").side
    named = bp.predict(probes, model="qwen3-8b-sft").side
    assert (side.base_model, side.family, side.family_known) == ("qwen3-8b", "qwen3", True)
    assert (side.release_date, side.release_date_source) == (
        named.release_date,
        named.release_date_source,
    )
