"""A private model may not take a name that reads as a public model's: its NFKC form (full-width
`ｇｐｔ-４ｏ`) or its Unicode TR39 confusable skeleton (Cyrillic `gрt-4o`) equal to a snapshot
model's is refused naming that model, through the real CLI; and wherever a private model is
compared beside public ones it says it is private."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from predictor import BenchPress
from predictor.cli import main
from predictor.names import confusables
from warehouse import private_models as store

EEE_RECORD = (
    Path(__file__).resolve().parents[1]
    / "fixtures/eval_formats/eee/records/hfopenllm_v2/0-hero/Matter-0.2-7B-DPO"
    / "0d7928c3-c769-474e-8249-7a5c70c4c559.json"
)
CYRILLIC = "g\u0440t-4o"  # CYRILLIC SMALL LETTER ER for the p
FULL_WIDTH = "\uff47\uff50\uff54-\uff14\uff4f"  # ｇｐｔ-４ｏ
GREEK_CAPITALS = "\u0391\u039c\u039f-x"  # Greek capitals alpha, mu, omicron


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load()


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------- the skeleton
def test_the_skeleton_maps_lookalikes_onto_one_prototype() -> None:
    assert confusables.skeleton(CYRILLIC) == confusables.skeleton("gpt-4o") == "gpt-4o"
    assert confusables.skeleton("\u0440\u0430\u0443\u0440\u0430l") == "paypal"
    # letters that only look alike in some fonts stay apart from genuinely other names
    assert confusables.skeleton("gpt-4o-mini") != confusables.skeleton("gpt-4o")
    # TR39: skeleton(X) = NFD(prototypes of NFD(X)); idempotent
    for text in (CYRILLIC, FULL_WIDTH, "\u00e9t\u00e9", "\u212b"):
        once = confusables.skeleton(text)
        assert confusables.skeleton(once) == once


def test_the_vendored_table_is_unicodes_and_says_so() -> None:
    table = confusables.prototypes()
    assert table["\u0440"] == "p"  # CYRILLIC SMALL LETTER ER -> LATIN SMALL LETTER P
    assert table["m"] == "rn"  # the prototype may be a sequence
    assert len(table) > 6000
    assert confusables.UNICODE_VERSION.count(".") == 2
    data = confusables.DATA_FILE.parent
    assert (
        (data / "LICENSE").read_text(encoding="utf-8").startswith("UNICODE, INC. LICENSE AGREEMENT")
    )


# ---------------------------------------------------------------------------- models add
@pytest.mark.parametrize("name", [CYRILLIC, FULL_WIDTH, "\uff27\uff30\uff34-4o", "GP\u0422-4O"])
def test_a_lookalike_of_a_public_model_is_refused(
    benchpress_home: Path, capsys, bp, name: str
) -> None:
    code, out, err = run(capsys, "models", "add", name, "--from", str(EEE_RECORD))
    assert (code, out) == (2, "")
    assert err.startswith("benchpress: error: ")
    assert "the snapshot model gpt-4o" in err
    assert bp.version in err
    assert err.count("\n") == 1
    assert not benchpress_home.exists()  # nothing written, not even an empty store


def test_the_refusal_shows_the_lookalike_spelt_out(benchpress_home: Path, capsys) -> None:
    _, _, err = run(capsys, "models", "add", CYRILLIC, "--from", str(EEE_RECORD))
    assert "g\\u0440t-4o" in err  # which letter is not what it looks like


def test_a_genuinely_different_name_is_accepted(benchpress_home: Path, capsys, bp) -> None:
    for name in ("team-\u0444-7b", "gpt-4o-team-finetune", "\u65e5\u672c\u8a9e\u30e2\u30c7\u30eb"):
        code, out, err = run(capsys, "models", "add", name, "--from", str(EEE_RECORD))
        assert (code, err) == (0, ""), name
        assert f"stored private model {name}" in out
    assert sorted(store.list_models(benchpress_home)["name"]) == sorted(
        ["team-\u0444-7b", "gpt-4o-team-finetune", "\u65e5\u672c\u8a9e\u30e2\u30c7\u30eb"]
    )


def test_save_models_refuses_a_lookalike_itself(benchpress_home: Path, bp) -> None:
    """The store's own check: whatever calls it, with the snapshot's names or without."""
    rows = bp.read_results([str(EEE_RECORD)])
    item = store.ModelImport(CYRILLIC, rows, snapshot_version=bp.version)
    with pytest.raises(store.NameTakenError, match="the snapshot model gpt-4o"):
        store.save_models([item], home=benchpress_home)
    with pytest.raises(store.LookalikeNameError, match="gpt-4o"):
        store.save_models([item], home=benchpress_home, public=store.public_names(bp.snapshot))
    assert store.public_lookalike("team-x", store.public_names(bp.snapshot)) is None
    assert not benchpress_home.exists()


def test_every_spelling_of_a_public_model_is_guarded(bp) -> None:
    """Ids with a setting (`o3@low`), display names and aliases too."""
    public = store.public_names(bp.snapshot)
    setting = next(m for m in bp.models if "@" in m and "o" in m)
    assert setting in store.public_lookalike(setting.replace("o", "\u043e"), public)
    shown = dict(bp.snapshot.models.select("model_id", "name").iter_rows())
    model_id, name = next((i, n) for i, n in shown.items() if n and n.lower() != i and "a" in n)
    assert model_id in store.public_lookalike(name.replace("a", "\u0430"), public)


# ---------------------------------------------------------------------------- compare
def test_compare_marks_a_private_reference(benchpress_home: Path, capsys, bp) -> None:
    scores = {"gpqa_diamond": 62.0, "mmlu_pro": 71.0}
    csv = benchpress_home.parent / "team.csv"
    csv.write_text(
        "model,benchmark,score\n" + "".join(f"m,{b},{v}\n" for b, v in scores.items()),
        encoding="utf-8",
    )
    assert run(capsys, "models", "add", "team-7b", "--from", str(csv))[0] == 0
    argv = ["compare", "--model", "gpqa_diamond=55", "--reference", "team-7b,gpt-4o"]
    argv += ["--targets", "mmlu_pro,hle"]
    code, out, err = run(capsys, *argv)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    mine = [line for line in lines if "vs team-7b" in line]
    public = [line for line in lines if "vs gpt-4o" in line]
    assert len(mine) == 2 and len(public) == 2
    assert all(line.rstrip().endswith("(private)") for line in mine)
    assert not any("private" in line for line in public)

    code, out, _ = run(capsys, *argv, "--json")
    assert code == 0
    rows = json.loads(out)["rows"]
    flags = {(r["reference_model"], r["reference_private"]) for r in rows}
    assert flags == {("team-7b", True), ("gpt-4o", False)}

    # the Python API's frame and summary say so too
    result = bp.compare_with_known_models({"gpqa_diamond": 55.0}, ["team-7b"], targets=["hle"])
    assert result.to_frame()["reference_private"].to_list() == [True]
    assert "vs team-7b" in result.summary() and "(private)" in result.summary()
