"""The registry of results-file formats: a format is its descriptor (`ResultFormat`) and one
registry entry, and detection, the byte caps, reading, the one-model-per-run rule, the folder
search and the web page (accept list, labels, upload) follow from it. A toy format declared in
this file, with no module of its own, is registered for a test and read everywhere with no
other file touched."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from predictor.api import BenchPress
from predictor.results import ResultsError, paths, read_result_bytes, read_results, registry
from predictor.results.formats import ResultFormat
from predictor.results.frame import RawResult
from predictor.results.mapping import MAPS_DIR
from predictor.results.registry import registered
from predictor.results.result_file import ResultFile
from predictor.web import uploads

MIB = 2**20
STATIC = Path(uploads.__file__).parent / "static"


# ------------------------------------------------------------------------ the toy format
def looks_like_toy(doc: object) -> bool:
    return isinstance(doc, dict) and "toy_version" in doc


def read_toy(file: ResultFile, doc: object | None) -> list[RawResult]:
    """`{"toy_version": 1, "runs": [{"model": M, "scores": {benchmark: score}}]}`."""
    assert isinstance(doc, dict)
    return [
        RawResult(
            model=run["model"],
            task=benchmark,
            metric="score",
            value=float(score),
            unit="value",
            tool="toy-eval",
            format="toy",
            benchmark_id=benchmark,
        )
        for run in doc["runs"]
        for benchmark, score in run["scores"].items()
    ]


TOY = ResultFormat(
    id="toy",
    label="Toy Eval",
    noun="a toy results file",
    known_as="a Toy Eval .toy file",
    max_bytes=MIB,
    read=read_toy,
    looks_like=looks_like_toy,
    suffixes=(".toy",),
    preload=("colorsys",),
)
SCORES = {"gpqa_diamond": 41.5, "hle": 7.0}


def toy_bytes(*models: str, pad: int = 0) -> bytes:
    runs = [{"model": model, "scores": SCORES} for model in models]
    return json.dumps({"toy_version": 1, "note": "x" * pad, "runs": runs}).encode()


def padded_to(size: int) -> bytes:
    data = toy_bytes("acme-7b")
    return toy_bytes("acme-7b", pad=size - len(data))


class InProcessPool:
    """The upload service's parsing, in this process: its worker processes know the formats of
    their modules, not one a test registers."""

    def parse(self, name: str, data: bytes, *limits: float) -> Any:
        return read_result_bytes(name, data)


@pytest.fixture(scope="module")
def bench() -> BenchPress:
    return BenchPress.load()


# ------------------------------------------------------------------------------- the toy
def test_a_registered_toy_format_is_found_in_a_folder_and_read(tmp_path: Path) -> None:
    (tmp_path / "run.toy").write_bytes(toy_bytes("acme-7b"))
    with registered(TOY):
        frame = read_results([tmp_path])
        uploaded = read_result_bytes("run.toy", toy_bytes("acme-7b"))
    for rows in (frame, uploaded):
        assert rows.select("model", "benchmark_id", "score", "status", "format", "tool").rows() == [
            ("acme-7b", "gpqa_diamond", 41.5, "mapped", "toy", "toy-eval"),
            ("acme-7b", "hle", 7.0, "mapped", "toy", "toy-eval"),
        ]
    assert frame["file"].to_list() == [str(tmp_path / "run.toy")] * 2


def test_without_the_registration_the_toy_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "run.toy").write_bytes(toy_bytes("acme-7b"))
    assert registry.formats() == registry.FORMATS
    with pytest.raises(ResultsError) as caught:
        read_results([tmp_path])
    assert caught.value.problem == "the folder holds no *.json, *.eval or *.csv file"
    with pytest.raises(ResultsError) as caught:
        read_result_bytes("run.toy", toy_bytes("acme-7b"))
    assert caught.value.problem == "not a results file of a known format"
    assert "Toy" not in str(caught.value)


def test_a_toy_file_one_byte_past_its_cap_is_refused_naming_the_format(tmp_path: Path) -> None:
    path = tmp_path / "big.toy"
    path.write_bytes(padded_to(MIB + 1))
    with registered(TOY):
        assert len(read_result_bytes("ok.toy", padded_to(MIB))) == 2
        with pytest.raises(ResultsError) as from_folder:
            read_results([tmp_path])
        with pytest.raises(ResultsError) as uploaded:
            read_result_bytes("big.toy", path.read_bytes())
    assert str(from_folder.value) == (
        f"{path}: 1,048,577 bytes, over the 1 MiB limit for a toy results file"
    )
    assert (
        str(uploaded.value)
        == "big.toy: 1,048,577 bytes, over the 1 MiB limit for a toy results file"
    )


def test_a_toy_run_naming_two_models_is_refused() -> None:
    with registered(TOY), pytest.raises(ResultsError) as caught:
        read_result_bytes("two.toy", toy_bytes("a-7b", "b-7b"))
    assert str(caught.value) == (
        "two.toy: the file mixes 2 models (a-7b, b-7b) (a run file holds one model's results; "
        "split it, or use a model,benchmark,score CSV or JSON for several models)"
    )


def test_a_file_of_no_known_format_lists_the_toy_among_the_formats() -> None:
    with registered(TOY), pytest.raises(ResultsError) as caught:
        read_result_bytes("other.json", b'{"something": "else"}')
    assert caught.value.hint == (
        "an lm-evaluation-harness results_*.json, an Inspect log (.eval or .json), an Every "
        "Eval Ever record, a HELM run folder, a model,benchmark,score CSV or JSON, or a Toy "
        "Eval .toy file"
    )


def test_the_web_page_offers_and_reads_a_toy_file(bench: BenchPress) -> None:
    with registered(TOY):
        offered = uploads.describe()
        preload = registry.preload_modules()
        service = uploads.UploadService(pool=InProcessPool())  # type: ignore[arg-type]
        answer = service.serve(
            None, lambda: uploads.read_upload(bench, "run.toy", toy_bytes("acme-7b"), None)
        )
    assert offered["accept"] == [".json", ".eval", ".csv", ".toy"]
    assert offered["labels"]["toy"] == "Toy Eval"
    assert offered["formats"].endswith(", or a Toy Eval .toy file")
    assert preload == ("inspect_ai.log", "colorsys")
    assert (answer["format"], answer["tool"], answer["model"]) == ("toy", "toy-eval", "acme-7b")
    assert [(p["benchmark"], p["score"]) for p in answer["probes"]] == list(SCORES.items())
    assert uploads.describe()["accept"] == [".json", ".eval", ".csv"]  # gone with the block
    assert "toy" not in uploads.describe()["labels"]


def test_a_registered_format_replaces_the_one_of_its_id(tmp_path: Path) -> None:
    lm_eval = registry.get("lm_eval")
    smaller = ResultFormat(**{**lm_eval.__dict__, "label": "LM Eval", "max_bytes": MIB})
    with registered(smaller):
        assert [f.id for f in registry.formats()] == ["lm_eval", "inspect", "eee", "helm", "tidy"]
        assert registry.labels()["lm_eval"] == "LM Eval"
    assert registry.get("lm_eval") is lm_eval


# ---------------------------------------------------------------- every registered format
@pytest.mark.parametrize("fmt", registry.FORMATS, ids=lambda f: f.id)
def test_every_registered_format_has_a_cap_a_label_and_a_reader(fmt: ResultFormat) -> None:
    assert 0 < fmt.max_bytes <= paths.MAX_FILE_BYTES
    assert fmt.label.strip() and fmt.noun.strip() and fmt.known_as.strip()
    assert callable(fmt.read) or callable(fmt.run_folder and fmt.run_folder.read)
    # the old tables, derived: a format missing from them was a KeyError in `check_size`
    assert paths.MAX_BYTES[fmt.id] == fmt.max_bytes
    assert paths.FORMAT_NAMES[fmt.id] == fmt.noun
    with pytest.raises(ResultsError) as caught:
        fmt.check_size(ResultFile("f", bytes(fmt.max_bytes + 1)))
    assert caught.value.problem.endswith(f"limit for {fmt.noun}")
    if fmt.task_map is not None:
        assert (MAPS_DIR / f"{fmt.task_map}.csv").is_file()
    assert uploads.describe()["labels"][fmt.id] == fmt.label


def test_the_page_takes_format_labels_from_the_server_not_a_copy() -> None:
    for script in STATIC.glob("*.js"):
        text = script.read_text(encoding="utf-8")
        for fmt in registry.FORMATS:
            assert f'"{fmt.label}"' not in text, f"{script.name} copies the label of {fmt.id}"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"max_bytes": 0}, "max_bytes must be from 1 to 268435456 (MAX_FILE_BYTES)"),
        ({"label": " "}, "label is empty"),
        ({"read": None}, "give exactly one reader: read (one file) or run_folder"),
        (
            {"looks_like": None},
            "a one-file format needs looks_like, opening, own_suffixes or magic",
        ),
        ({"id": "Toy-Eval"}, "id must be lowercase letters, digits and _, starting with a letter"),
        ({"own_suffixes": (".tox",)}, "own_suffixes must be among suffixes"),
    ],
)
def test_a_format_without_what_it_needs_is_refused_when_declared(
    change: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)):
        ResultFormat(**{**TOY.__dict__, **change})


def test_a_repeated_id_or_claimed_suffix_is_refused_when_registered() -> None:
    with pytest.raises(ValueError, match="results format 'toy' is registered twice"):
        registry.registry([TOY, TOY])
    csv_too = ResultFormat(**{**TOY.__dict__, "suffixes": (".csv",), "own_suffixes": (".csv",)})
    claimed_twice = r"results formats 'tidy' and 'toy' both claim \.csv"
    with pytest.raises(ValueError, match=claimed_twice), registered(csv_too):
        pass
    assert registry.formats() == registry.FORMATS
