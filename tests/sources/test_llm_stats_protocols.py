"""llm-stats `analysis_method` rules: stated settings become the row's setting, protocols that
are not a benchmark's standard single-attempt score are rejected or moved to a variant key.
Recorded payload bytes in, exact rows out (module docstring of `pipelines.sources.llm_stats`)."""

from __future__ import annotations

import json
import time

import polars as pl
import pytest

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, replay_relpath
from pipelines.identity.registry import load_registry
from pipelines.identity.resolve import resolve
from pipelines.sources import llm_stats


def _recorded() -> dict[str, bytes]:
    payloads = {}
    urls = list(llm_stats.SOURCE.urls)
    for url in urls:
        payloads[url] = (DEFAULT_REPLAY_ROOT / replay_relpath(url)).read_bytes()
    for url in llm_stats.discover(payloads):
        payloads[url] = (DEFAULT_REPLAY_ROOT / replay_relpath(url)).read_bytes()
    return payloads


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    return llm_stats.parse(_recorded())


@pytest.fixture(scope="module")
def normalized(frame: pl.DataFrame) -> pl.DataFrame:
    return resolve(
        frame.with_columns(
            pl.lit(1, pl.Int64).alias("parse_id"),
            pl.lit(None, pl.String).alias("payload_sha256"),
            pl.lit(None, pl.Datetime("us", "UTC")).alias("fetched_at"),
        ),
        load_registry(),
    )


def facts(row: dict) -> dict:
    return json.loads(row["extra"])


def cells(normalized: pl.DataFrame, model_key: str) -> dict[str, tuple[str | None, float]]:
    """benchmark_id -> (model_id, score) of one model's resolved rows."""
    rows = normalized.filter(
        (pl.col("model_key") == model_key) & (pl.col("resolution") == "resolved")
    )
    return {r["benchmark_id"]: (r["model_id"], r["score"]) for r in rows.iter_rows(named=True)}


def test_deepseek_v3_2_exp_reasoning_mode_is_its_thinking_setting(normalized) -> None:
    got = cells(normalized, "deepseek-v3.2-exp")
    thinking = "deepseek-v3.2-exp@thinking"
    for bench, score in {
        "gpqa_diamond": 79.9,
        "mmlu_pro": 85.0,
        "hle": 19.8,
        "aime_2025": 89.3,
        "hmmt_feb_2025": 83.6,
        "livecodebench": 74.1,
        "aider_polyglot": 74.5,
    }.items():
        assert got[bench] == (thinking, pytest.approx(score)), bench
    # the agentic records state no mode: the API default (non-thinking) as before
    assert got["swe_bench_verified"] == ("deepseek-v3.2-exp@nothinking", pytest.approx(67.8))
    assert got["browsecomp"] == ("deepseek-v3.2-exp@nothinking", pytest.approx(40.1))


def test_deepseek_v3_1_modes_split(frame, normalized) -> None:
    v31 = frame.filter(pl.col("model_key") == "deepseek-v3.1")
    hle = v31.filter(pl.col("benchmark_key").str.starts_with("humanity")).row(0, named=True)
    assert (hle["benchmark_key"], hle["value"], hle["thinking_budget"]) == (
        "humanity's-last-exam-(text-only)",
        0.159,
        "on",
    )
    assert facts(hle)["record_benchmark_id"] == "humanity's-last-exam"
    got = cells(normalized, "deepseek-v3.1")
    assert got["hle_text"] == ("deepseek-v3.1@thinking", pytest.approx(15.9))
    assert "hle" not in got
    assert {m for b, (m, _) in got.items() if b != "hle_text" and not b.startswith("browse")} == {
        "deepseek-v3.1@nothinking"
    }
    assert got["gpqa_diamond"] == ("deepseek-v3.1@nothinking", pytest.approx(74.9))


def test_settings_of_every_stated_mode(normalized) -> None:
    ids = dict(
        normalized.filter(pl.col("source") == "llm_stats")
        .group_by("model_key")
        .agg(pl.col("model_id").filter(pl.col("resolution") == "resolved").unique().sort())
        .iter_rows()
    )
    # reasoning-only models: "with thinking mode" is their headline, not a new id
    assert ids["gpt-5-2025-08-07"] == ["gpt-5"]
    assert ids["o3-2025-04-16"] == ["o3-high"]
    assert ids["o3-mini"] == ["o3-mini-high"]  # "o3-mini high"
    # Claude 4: "Extended thinking (up to 64K tokens)" is the headline, "No extended thinking"
    assert ids["claude-opus-4-1-20250805"] == ["claude-opus-4.1", "claude-opus-4.1@nothinking"]
    # Nemotron hybrids: "Reasoning On/Off", "Pass@1, Reasoning"
    assert ids["llama-3.3-nemotron-super-49b-v1"] == [
        "llama-3.3-nemotron-super-49b-v1@nothinking",
        "llama-3.3-nemotron-super-49b-v1@thinking",
    ]
    assert ids["llama-3.1-nemotron-ultra-253b-v1"] == ["llama-3.1-nemotron-ultra-253b-v1@thinking"]
    # "without thinking mode" on a model without modes is the model itself
    assert ids["gpt-4o-2024-08-06"] == ["gpt-4o-20240806"]


REJECTED = {
    # (row_ref, benchmark_key): analysis_rule
    ("deepseek/models/deepseek-r1-distill-qwen-32b/benchmarks.json[0]", "aime-2024"): "samples",
    ("deepseek/models/deepseek-r1-zero/benchmarks.json[0]", "aime-2024"): "samples",
    ("mistral/models/mistral-small-3.2-24b-instruct-2506/benchmarks.json[10]", "mbpp-plus"): (
        "samples"
    ),
    ("qwen/models/qwen3-32b/benchmarks.json[0]", "aider"): "aider-pass@2",
    ("openai/models/gpt-5-2025-08-07/benchmarks.json[2]", "swe-lancer-(ic-diamond-subset)"): (
        "earnings"
    ),
    ("deepseek/models/deepseek-v3.1/benchmarks.json[6]", "simpleqa"): "tools",
    ("anthropic/models/claude-opus-4-20250514/benchmarks.json[2]", "gpqa"): "parallel",
    ("qwen/models/qwen2.5-omni-7b/benchmarks.json[7]", "fleurs"): "error-rate",
}


def test_rejected_protocols_are_kept_with_a_reason(frame) -> None:
    rejected = frame.filter(pl.col("value").is_null())
    by_rule = rejected.group_by(
        pl.col("extra").str.json_path_match("$.analysis_rule").alias("rule")
    ).len()
    assert dict(by_rule.iter_rows()) == {
        "samples": 15,
        "parallel": 13,
        "tools": 5,
        "error-rate": 4,
        "estimate": 3,
        "aider-pass@2": 2,
        "percentile": 1,
        "earnings": 1,
    }
    found = {
        (r["row_ref"], r["benchmark_key"]): facts(r)["analysis_rule"]
        for r in rejected.iter_rows(named=True)
    }
    for key, rule in REJECTED.items():
        assert found.get(key) == rule, key
    gpt5 = rejected.filter(pl.col("row_ref") == "openai/models/gpt-5-2025-08-07/benchmarks.json[2]")
    assert facts(gpt5.row(0, named=True))["rejected"] == (
        "earnings-based (dollar) evaluation, not a percent of tasks"
    )


def test_rejections_never_publish(normalized) -> None:
    def score(model_key: str, bench: str) -> list[float]:
        return normalized.filter(
            (pl.col("model_key") == model_key)
            & (pl.col("benchmark_id") == bench)
            & (pl.col("resolution") == "resolved")
        )["score"].to_list()

    assert score("gpt-5-2025-08-07", "swelancer") == []
    for distill in ("deepseek-r1-distill-qwen-32b", "deepseek-r1-distill-llama-70b"):
        assert score(distill, "aime_2024") == []
    assert score("deepseek-r1-zero", "aime_2024") == []
    assert score("mistral-small-3.2-24b-instruct-2506", "mbpp_plus") == []
    assert score("qwen3-32b", "aider_code_editing") == []
    assert score("gpt-oss-20b", "hle") == [pytest.approx(10.9)]  # without tools only
    assert score("gpt-oss-20b", "hle_tools") == [pytest.approx(17.3)]
    for model in ("glm-4.5", "glm-4.5-air", "kimi-k2-instruct-0905"):
        assert score(model, "hle") == [], model
    assert score("glm-4.5", "hle_text") == [pytest.approx(14.4)]
    for model in ("deepseek-v3.1", "deepseek-v3.2-exp", "deepseek-r1-0528"):
        assert score(model, "simpleqa") == [], model
    # tool use is the standard protocol of agentic benchmarks: kept
    assert score("deepseek-v3.1", "browsecomp") == [pytest.approx(30.0)]
    assert score("o3-2025-04-16", "browsecomp") == [pytest.approx(49.7)]
    assert score("claude-sonnet-4-5-20250929", "tau_bench_retail") == [pytest.approx(86.2)]
    assert score("gpt-5-2025-08-07", "frontiermath") == [pytest.approx(26.3)]


@pytest.mark.parametrize(
    ("method", "setting"),
    [
        ("Graduate-level reasoning", (None, None)),
        ("5-shot, Commonsense reasoning", (None, None)),
        ("Pass@1, Reasoning", ("on", None)),
        ("Score, Reasoning Off", ("0", None)),
        ("Reasoning Mode (w/o Tool Use)", ("on", None)),
        ("GPT-4o without thinking mode - Multimodal spatial reasoning.", ("0", None)),
        ("No extended thinking. Terminus 1 averaged over 5 trials.", ("0", None)),
        ("Diamond: Extended thinking (up to 64K tokens)", ("64K", None)),
        ("Thinking mode enabled (up to 128K tokens) with step-by-step reasoning", ("on", None)),
        ("GPT-5 - Diamond thinking no tools", ("on", None)),
        ("accuracy (diff, o4-mini-high)", (None, "high")),
        (None, (None, None)),
    ],
)
def test_method_setting(method, setting) -> None:
    assert llm_stats.method_setting(method) == setting


@pytest.mark.parametrize(
    ("method", "bench", "label"),
    [
        ("Avg@64", "aime-2024", None),
        ("4-shot em_maj1@1", "math", None),
        ("5-shot majority@1", "gsm8k", None),
        ("Pass@2", "aider-polyglot", None),  # Aider's own score
        ("Pass@2", "aider", "aider-pass@2"),
        ("Cons@64", "aime-2024", "samples"),
        ("Reasoning Mode (w/o Tool Use)", "gpqa", None),
        ("Avg 5 runs, no custom tools/prompting (footnote [4])", "tau-bench-airline", None),
        ("GPT-4.1 with no tools - Competition mathematics (AIME 2025).", "aime-2025", None),
        ("Agentic Tool Use", "swe-bench-verified", None),
        ("Agentic Tool Use", "simpleqa", "tools"),
        ("Accuracy (with tools)", "humanity's-last-exam", "tools"),
        ("text-based questions only", "hle", "text-only"),
        ("Speech recognition accuracy (1 - WER)", "fleurs", None),
        ("Agentic Coding - Single Attempt", "swe-bench-verified", None),
    ],
)
def test_method_protocol(method, bench, label) -> None:
    found = llm_stats.method_protocol(method, bench)
    assert (found[0] if found else None) == label


def test_hostile_analysis_methods_are_read_in_linear_time_without_crashing() -> None:
    started = time.perf_counter()
    assert llm_stats.method_setting("extended thinking " * 8000) == ("on", None)
    label, action, _ = llm_stats.method_protocol("pass@" + "9" * 5000, "mmlu")
    assert (label, action) == ("samples", "reject")
    assert time.perf_counter() - started < 2.0  # was 7.5 s for the first (quadratic gap)
