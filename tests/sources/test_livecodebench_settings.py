"""LiveCodeBench: the setting a display name (`model_repr`) states reaches identity (recorded
payload in -> exact model ids out)."""

from __future__ import annotations

import polars as pl

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, replay_relpath
from pipelines.sources import livecodebench as lcb
from tests.support.resolving import resolved


def _normalized() -> pl.DataFrame:
    return resolved(
        lcb.parse({lcb.URL: (DEFAULT_REPLAY_ROOT / replay_relpath(lcb.URL)).read_bytes()})
    )


def test_every_model_id() -> None:
    out = _normalized()
    ids = dict(out.select("row_ref", "model_id").iter_rows())
    assert ids == {
        "models[0]": None,  # deepseek-chat: a moving alias, unresolved as before
        "models[1]": "gpt-4-turbo-20240409",
        "models[2]": "gpt-4o-20240806",
        "models[3]": "gpt-4o-mini",
        "models[4]": "o3-mini@low",
        "models[5]": "o3-mini@medium",
        "models[6]": "o3-mini-high",
        "models[7]": "o4-mini-high",
        "models[8]": "o4-mini@medium",
        "models[9]": "o4-mini@low",
        "models[10]": "claude-3.5-sonnet",
        # `Claude-3.7-Sonnet (Thinking)`: was published as claude-3.7-sonnet@nothinking
        "models[11]": "claude-3.7-sonnet@thinking",
        "models[12]": "claude-3-haiku",
        "models[13]": "gemini-2.5-pro-exp-03-25",
        "models[14]": "gemini-2.5-flash-preview-04-17",
        "models[15]": "grok-3-mini@high",
    }
    claude = out.filter(pl.col("row_ref") == "models[11]").row(0, named=True)
    assert (claude["model_key"], claude["model_name"]) == (
        "claude-3-7-sonnet-20250219",
        "Claude-3.7-Sonnet (Thinking)",
    )
    assert (claude["setting"], claude["model_setting"], claude["resolution"]) == (
        "thinking",
        "thinking",
        "resolved",
    )
    assert out.filter(pl.col("model_id") == "claude-3.7-sonnet@nothinking").is_empty()
