"""Which source spelling a model is shown under (`models.parquet` `name`).

The rows are the real spellings the recorded payloads use for these models (Epoch AI files a
PaLM 2-L row and a family name "GPT-3.5" under other models; agent systems carry the model's
name after a "+")."""

from __future__ import annotations

import polars as pl

from pipelines.stages.snapshot import display_names


def rows(*spellings: tuple[str, str, str, str | None, int]) -> pl.DataFrame:
    """(model_id, source, model_name, stated setting, how many rows)."""
    return pl.DataFrame(
        [(m, src, name, setting) for m, src, name, setting, n in spellings for _ in range(n)],
        schema=["model_id", "source", "model_name", "setting"],
        orient="row",
    )


def shown(frame: pl.DataFrame) -> dict[str, str]:
    return dict(display_names(frame).iter_rows())


def test_the_spelling_of_the_model_itself_beats_a_majority_of_other_names() -> None:
    frame = rows(
        ("palm-2-s", "epoch_ai", "PaLM 2-L", None, 1),
        ("palm-2-s", "epoch_ai", "PaLM 2-S", None, 1),
        ("text-davinci-002", "epoch_ai", "GPT-3.5", None, 3),
        ("text-davinci-002", "epoch_ai", "text-davinci-002", None, 2),
        ("gpt-4o", "epoch_ai", "OpenHands + GPT-4o", None, 5),
        ("gpt-4o", "arc_prize", "GPT 4o (Nov)", None, 1),
    )
    assert shown(frame) == {
        "gpt-4o": "GPT 4o (Nov)",
        "palm-2-s": "PaLM 2-S",
        "text-davinci-002": "text-davinci-002",
    }


def test_the_benchmark_matrix_name_wins_and_a_name_stating_the_setting_comes_next() -> None:
    frame = rows(
        ("deepseek-v3", "epoch_ai", "deepseek-v3", None, 9),
        ("deepseek-v3", "benchpress_matrix", "DeepSeek-V3", None, 1),
        ("o3-mini@medium", "epoch_ai", "o3-mini", None, 4),
        ("o3-mini@medium", "livebench", "o3-mini (Medium)", "medium", 1),
    )
    assert shown(frame) == {"deepseek-v3": "DeepSeek-V3", "o3-mini@medium": "o3-mini (Medium)"}


def test_readable_names_beat_api_ids_and_an_only_system_name_is_still_a_name() -> None:
    frame = rows(
        ("yi-34b-chat", "open_llm_leaderboard", "01-ai/Yi-34B-Chat", None, 6),
        ("yi-34b-chat", "lmarena", "Yi 34B Chat", None, 1),
        ("codet5-plus-16b", "evalplus", "CodeT5+-16B", None, 1),
        ("sweagent-only", "swebench", "SWE-agent + Some Model", None, 1),
    )
    assert shown(frame) == {
        "codet5-plus-16b": "CodeT5+-16B",
        "sweagent-only": "SWE-agent + Some Model",
        "yi-34b-chat": "Yi 34B Chat",
    }


def test_a_row_without_a_model_name_is_shown_under_its_id() -> None:
    frame = rows(("a", "benchpress_matrix", None, None, 1), ("b", "epoch_ai", None, None, 1))
    frame = pl.concat([frame, rows(("a", "epoch_ai", "Model A", None, 2))], how="vertical_relaxed")
    assert shown(frame) == {"a": "Model A", "b": "b"}  # a name where any row has one
