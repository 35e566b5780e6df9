"""An EEE record of an Open LLM Leaderboard v2 model gives the probe scores the leaderboard's
own payload gives for that model, parsed and resolved as the pipeline does.

The payload is the recorded `huggingface_v2.csv` our connector reads; every vendored
`hfopenllm_v2` record (a 1-in-75 sample of the EEE conversion) has its model in it. The EEE
conversion rounds the raw accuracies to 4 decimals, so scores agree to 0.005 points."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from pipelines.identity.registry import load_registry
from pipelines.identity.resolve import resolve
from pipelines.sources import open_llm_leaderboard
from predictor.results import probe_scores, read_results

REPO = Path(__file__).resolve().parents[2]
RECORDS = sorted((REPO / "tests/fixtures/eval_formats/eee/records/hfopenllm_v2").rglob("*.json"))
PAYLOAD = (
    REPO
    / "pipelines/replay/raw.githubusercontent.com/fboulnois/llm-leaderboard-csv"
    / open_llm_leaderboard.COMMIT
    / "csv/huggingface_v2.csv"
)
ROUNDING = 0.5e-4 * 100 + 1e-9  # 4 decimals of a fraction, in percentage points


@pytest.fixture(scope="module")
def leaderboard() -> pl.DataFrame:
    """The payload's rows of the records' models, resolved onto our benchmark ids."""
    parsed = open_llm_leaderboard.parse({open_llm_leaderboard.URL: PAYLOAD.read_bytes()})
    names = {json.loads(p.read_text(encoding="utf-8"))["model_info"]["id"] for p in RECORDS}
    rows = parsed.filter(pl.col("model_name").is_in(sorted(names))).with_columns(
        pl.lit(0).alias("parse_id"),  # provenance columns the warehouse adds after parsing
        pl.lit(None, pl.String).alias("payload_sha256"),
        pl.lit(None, pl.String).alias("fetched_at"),
    )
    return resolve(rows, load_registry()).filter(pl.col("resolution") == "resolved")


def leaderboard_scores(leaderboard: pl.DataFrame, record: dict) -> dict[str, float]:
    """The leaderboard's scores of the record's model: the row evaluated in the record's
    precision (a repo evaluated twice, in bfloat16 and float16, has two rows)."""
    info = record["model_info"]
    precision = info["additional_details"]["precision"]
    rows = leaderboard.filter(
        (pl.col("model_name") == info["id"])
        & pl.col("model_key").str.contains(f"_{precision}_", literal=True)
    )
    assert rows["model_key"].n_unique() == 1, (info["id"], rows["model_key"].unique().to_list())
    return dict(rows.select("benchmark_id", "score").iter_rows())


def test_every_sampled_record_has_its_model_in_the_payload(leaderboard: pl.DataFrame) -> None:
    assert len(RECORDS) == 61
    models = {json.loads(p.read_text(encoding="utf-8"))["model_info"]["id"] for p in RECORDS}
    assert models <= set(leaderboard["model_name"])


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: "/".join(p.parts[-3:-1]))
def test_the_record_gives_the_leaderboards_probe_scores(
    leaderboard: pl.DataFrame, path: Path
) -> None:
    record = json.loads(path.read_text(encoding="utf-8"))
    ours = probe_scores(read_results(path))
    theirs = leaderboard_scores(leaderboard, record)
    assert (
        set(ours)
        == set(theirs)
        == {
            "open_llm_ifeval",
            "open_llm_bbh",
            "open_llm_math_lvl5",
            "open_llm_gpqa",
            "open_llm_musr",
            "open_llm_mmlu_pro",
        }
    )
    for benchmark, score in theirs.items():
        assert ours[benchmark] == pytest.approx(score, abs=ROUNDING), benchmark
