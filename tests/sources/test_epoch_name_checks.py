"""Epoch AI: rows whose `Name` contradicts their `Model version`, and incomplete runs, on the
recorded export (real bytes in -> exact rows, ids and published cells out)."""

from __future__ import annotations

import io
import json
import zipfile

import polars as pl
import pytest

from pipelines.sources import epoch_ai
from pipelines.transforms.matrix import build_matrix
from tests.support.resolving import resolved

URL = epoch_ai.URL


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, replay_relpath

    return epoch_ai.parse({URL: (DEFAULT_REPLAY_ROOT / replay_relpath(URL)).read_bytes()})


@pytest.fixture(scope="module")
def normalized(frame: pl.DataFrame) -> pl.DataFrame:
    return resolved(frame)


@pytest.fixture(scope="module")
def cells(normalized: pl.DataFrame) -> pl.DataFrame:
    return build_matrix(normalized)[0]


def _extra(frame: pl.DataFrame, ref: str) -> tuple[float | None, dict]:
    row = frame.filter(pl.col("row_ref") == ref)
    assert row.height == 1, ref
    return row["value"][0], json.loads(row["extra"][0])


def _cell(cells: pl.DataFrame, model: str, bench: str) -> tuple[float, str] | None:
    hit = cells.filter((pl.col("model_id") == model) & (pl.col("benchmark_id") == bench))
    return (round(hit["score"][0], 6), hit["row_ref"][0]) if hit.height else None


def test_conflicts_counted_by_kind(frame: pl.DataFrame) -> None:
    conflicts = frame.filter(pl.col("extra").str.json_path_match("$.name_conflict").is_not_null())
    assert conflicts.height == 40
    by_name = conflicts.filter(
        pl.col("extra").str.json_path_match("$.identity_from") == "model_name"
    )
    assert by_name.height == 36  # 32 base + 4 size: identified from Name, value kept
    assert by_name["value"].null_count() == 0
    systems = conflicts.filter(pl.col("value").is_null())
    assert sorted(systems["row_ref"]) == [
        "video_mme_external.csv line 18",  # QuoTA / LLaVA-Video-7B-Qwen2
        "video_mme_external.csv line 3",  # AdaReTaKe / Qwen2.5-VL-72B-Instruct
        "video_mme_external.csv line 34",  # ReTaKe / Qwen2-VL-7B-Instruct
        "video_mme_external.csv line 56",  # ShareGeminiXMU / an ensemble key
    ]
    bases = by_name.filter(pl.col("extra").str.contains("is the base model"))
    assert dict(bases["model_name"].value_counts().iter_rows()) == {
        "DeepSeek-V3 Base": 7,
        "DeepSeek-V2 Base": 8,
        "Qwen2.5 72B Base": 8,
        "LLaMA-3.1 405B Base": 8,
        "ChatGLM 2-6B (base)*": 1,
    }
    sizes = by_name.filter(pl.col("extra").str.contains("states size"))
    assert sorted(sizes["row_ref"]) == [
        "gsm8k_external.csv line 44",  # Llama 2 (7B) / Llama-2-70b-hf
        "mmlu_external.csv line 655",  # Qwen2.5-Coder-3B / Qwen2.5-Coder-32B
        "open_book_qa_external.csv line 103",  # Phi-3-small / Phi-3-mini-4k-instruct
        "open_book_qa_external.csv line 28",  # PaLM 2-L / PaLM 2-S
    ]


def test_exact_rows(frame: pl.DataFrame) -> None:
    value, extra = _extra(frame, "arc_ai2_external.csv line 255")
    assert value == 0.953 and extra["identity_from"] == "model_name"
    assert extra["name_conflict"] == (
        "Name 'DeepSeek-V3 Base' is the base model, Model version 'DeepSeek-V3' is not"
    )
    value, extra = _extra(frame, "mmlu_external.csv line 655")
    assert value == 0.612 and extra["identity_from"] == "model_name"
    assert extra["name_conflict"] == (
        "Name 'Qwen2.5-Coder-3B' states size 3b, Model version 'Qwen2.5-Coder-32B' 32b"
    )
    # the 32B row no longer shares its key with the 3B row
    value, extra = _extra(frame, "mmlu_external.csv line 660")
    assert value == 0.791 and "same_key_rows" not in extra and "name_conflict" not in extra
    value, extra = _extra(frame, "video_mme_external.csv line 3")
    assert value is None and extra["published_value"] == "0.735"
    assert (
        extra["rejected"]
        == extra["name_conflict"]
        == (
            "Name 'AdaReTaKe' shares no word with Model version 'Qwen2.5-VL-72B-Instruct': another "
            "system or method, not the model"
        )
    )
    value, extra = _extra(frame, "frontiermath.csv line 2")
    assert value is None and extra["published_value"] == "0.221"
    assert extra["rejected"] == (
        "incomplete run (id 'manual_deepseek-v3.2_frontiermath_tiers_13_private_frankenstein"
        "_run_incomplete')"
    )
    incomplete = frame.filter(
        pl.col("extra").str.json_path_match("$.rejected").str.contains("incomplete run")
    )
    assert incomplete.height == 1  # stitched ("frankenstein") runs that are complete are kept
    assert _extra(frame, "frontiermath.csv line 20")[0] == 0.376


def test_identities_and_cells(normalized: pl.DataFrame, cells: pl.DataFrame) -> None:
    ids = dict(
        normalized.filter(
            pl.col("row_ref").is_in(
                [
                    "arc_ai2_external.csv line 255",
                    "mmlu_external.csv line 655",
                    "bbh_external.csv line 41",
                ]
            )
        )
        .select("row_ref", "model_id")
        .iter_rows()
    )
    assert ids == {
        "arc_ai2_external.csv line 255": "deepseek-v3-base",
        "bbh_external.csv line 41": "deepseek-v3-base",
        "mmlu_external.csv line 655": "qwen2.5-coder-3b",
    }
    for bench, score in (
        ("arc_challenge", 95.3),
        ("bigbench_hard", 82.9),
        ("hellaswag", 88.9),
        ("triviaqa", 82.9),
        ("winogrande", 85.2),
    ):
        assert _cell(cells, "deepseek-v3-base", bench)[0] == score
        chat = _cell(cells, "deepseek-v3", bench)
        assert chat is None or "Base" not in chat[1], (bench, chat)
    assert _cell(cells, "deepseek-v3", "arc_challenge") is None
    assert _cell(cells, "qwen2.5-coder-32b", "mmlu") == (79.1, "mmlu_external.csv line 660")
    assert _cell(cells, "qwen2.5-coder-3b", "mmlu") == (61.2, "mmlu_external.csv line 655")
    assert _cell(cells, "qwen2.5-vl-72b-instruct", "video_mme") is None
    assert _cell(cells, "deepseek-v3.2@nothinking", "frontiermath") is None
    rejected = normalized.filter(pl.col("row_ref") == "video_mme_external.csv line 3")
    assert rejected["resolution"].to_list() == ["rejected"]
    assert rejected["note"][0].startswith("Name 'AdaReTaKe' shares no word")


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ("Mistral-7B-v0.1", "Mistral 7B"),
        ("text-davinci-001", "GPT-3 (175B)"),
        ("text-davinci-002", "GPT-3.5"),
        ("LLaMA-33B", "LLaMA (30B)"),
        ("Qwen-1_8B", "QWEN 1.8B"),
        ("o1-2024-12-17_medium", "o1-2024-12-17"),
        ("open_llama_7b", "OpenLLaMA-7B"),
        ("T5-11B", "T5 (11B)"),
        ("Meta-Llama-3-8B-Instruct", "Llama 3 (8B)"),
        ("Baichuan-2-13B-Base", "Baichuan2 13B"),
        ("Phi-3-mini-4k-instruct", "Phi-3-mini 3.8b"),
        ("claude-3-5-sonnet-20241022", "OpenHands + Claude 3.5 Sonnet"),
        ("gpt-4o", ""),
    ],
)
def test_harmless_spellings(key: str, name: str) -> None:
    assert epoch_ai.name_conflict(key, name) is None


def _zip(text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mmlu_external.csv", text)
    return buffer.getvalue()


def test_payload_cannot_set_identity_from() -> None:
    text = "Model version,Score,Identity from,Name\nm-7b,0.5,model_name,other 7B\n"
    out = epoch_ai.parse({URL: _zip(text)})
    assert "identity_from" not in json.loads(out["extra"][0])


def test_an_absurdly_long_name_is_not_a_model_and_is_checked_at_once() -> None:
    kind, reason = epoch_ai.name_conflict("Llama-2-7b", "word " * 20_000)
    assert kind == "system" and reason == "Name or Model version longer than 200 characters"
