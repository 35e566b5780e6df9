"""A results file given to the page: `POST /api/results` over real HTTP (exact answers, size
cap, cross-site refusal, bad files named), then the page in headless Chromium choosing the
file through its file input and predicting from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from predictor import BenchPress
from predictor.util.paths import bundled_snapshot_dir
from predictor.web.bodies import MAX_BODY_BYTES
from predictor.web.uploads import MAX_UPLOAD_BYTES
from tests.web.conftest import (
    BUNDLED_VERSION,
    HOSTILE_NAME,
    Response,
    RunningApp,
    open_page,
    table_rows,
    wait,
)
from tests.web.test_web_hardening import answers, error, exchange

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "eval_formats"
LM_EVAL = FIXTURES / "lm_eval" / "results_2026-01-21T03-44-18.458309.json"
OCTET = {"Content-Type": "application/octet-stream"}

# a tidy table: a name the snapshot resolves, an id, a benchmark it has but did not fit
TIDY = (
    b"model,benchmark,score,stderr\n"
    b"acme-7b,GPQA Diamond,41.5,1.2\n"
    b"acme-7b,mmlu_pro,55.25,\n"
    b"acme-7b,hle,7,\n"
    b"acme-7b,agieval,12,\n"
)


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())


def upload(app: RunningApp, name: str, data: bytes, **extra: str) -> Response:
    query = "&".join([f"name={quote(name)}", *(f"{k}={quote(v)}" for k, v in extra.items())])
    return app.request(f"/api/results?{query}", data=data, headers=OCTET)


def sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------------- the API
def test_a_tidy_csv_answers_its_probe_scores(app: RunningApp) -> None:
    answer = upload(app, "acme.csv", TIDY)
    assert answer.status == 200, answer.body
    assert answer.json() == {
        "version": BUNDLED_VERSION,
        "file": "acme.csv",
        "sha256": sha256(TIDY),
        "format": "tidy",
        "tool": "tidy",
        "tool_version": None,
        "model": "acme-7b",
        "models": ["acme-7b"],
        "probes": [
            {
                "benchmark": "gpqa_diamond",
                "score": 41.5,
                "stderr": 1.2,
                "task": "GPQA Diamond",
                "metric": "score",
                "n_shot": None,
                "note": None,
            },
            {
                "benchmark": "mmlu_pro",
                "score": 55.25,
                "stderr": None,
                "task": "mmlu_pro",
                "metric": "score",
                "n_shot": None,
                "note": None,
            },
            {
                "benchmark": "hle",
                "score": 7.0,
                "stderr": None,
                "task": "hle",
                "metric": "score",
                "n_shot": None,
                "note": None,
            },
        ],
        "unmapped": [],
        "unmapped_subtasks": {},
        "other_metric": [],
        "not_run": [],
        "not_fitted": ["agieval"],
        "notes": [],
        "unknown": [],
    }


LM_EVAL_MODEL = "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1"
GSM8K_NOTE = (
    "lm-eval: 5-shot, the answer must follow '####'; vendors mostly report 8-shot or 0-shot "
    "chain of thought, and chat models often score lower under strict-match"
)
EEE_RECORD = (
    FIXTURES
    / "eee/records/hfopenllm_v2/0-hero/Matter-0.2-7B-DPO/0d7928c3-c769-474e-8249-7a5c70c4c559.json"
)


def lm_eval_with_gsm8k() -> bytes:
    """The real lm-eval file with one task added the way lm-eval writes it (gsm8k, 5-shot,
    both of its filters), so that one of its results maps onto a fitted benchmark."""
    doc = json.loads(LM_EVAL.read_bytes())
    doc["results"]["gsm8k"] = {
        "alias": "gsm8k",
        "exact_match,strict-match": 0.4,
        "exact_match_stderr,strict-match": 0.0135,
        "exact_match,flexible-extract": 0.42,
        "exact_match_stderr,flexible-extract": 0.0136,
    }
    doc["n-shot"]["gsm8k"] = 5
    return json.dumps(doc, indent=2).encode()


def test_the_real_lm_eval_file_lists_its_unmapped_tasks(app: RunningApp) -> None:
    data = LM_EVAL.read_bytes()
    answer = upload(app, LM_EVAL.name, data)
    assert answer.status == 200, answer.body
    assert answer.json() == {
        "version": BUNDLED_VERSION,
        "file": LM_EVAL.name,
        "sha256": sha256(data),
        "format": "lm_eval",
        "tool": "lm-evaluation-harness",
        "tool_version": "0.4.9.2",
        "model": LM_EVAL_MODEL,
        "models": [LM_EVAL_MODEL],
        "probes": [],
        "unmapped": ["math_perturbed_full", "math_rephrased_full"],
        "unmapped_subtasks": {},
        "other_metric": [],
        "not_run": [],
        "not_fitted": [],
        "notes": [],
        "unknown": [],
    }
    plus = upload(app, "results_plus.json", lm_eval_with_gsm8k()).json()
    assert plus["probes"] == [
        {
            "benchmark": "gsm8k",
            "score": 40.0,
            "stderr": 1.35,
            "task": "gsm8k",
            "metric": "exact_match,strict-match",
            "n_shot": 5,
            "note": GSM8K_NOTE,
        }
    ]
    assert plus["unmapped"] == ["math_perturbed_full", "math_rephrased_full"]
    assert plus["notes"] == [f"gsm8k: {GSM8K_NOTE}"]


def test_a_real_every_eval_ever_record(app: RunningApp) -> None:
    answer = upload(app, EEE_RECORD.name, EEE_RECORD.read_bytes()).json()
    assert {k: answer[k] for k in ("format", "tool", "tool_version", "model")} == {
        "format": "eee",
        "tool": "HF Open LLM v2",
        "tool_version": "0.2.0",
        "model": "0-hero/Matter-0.2-7B-DPO",
    }
    assert [(p["benchmark"], p["score"], p["task"]) for p in answer["probes"]] == [
        ("open_llm_ifeval", 33.03, "hfopenllm_v2/IFEval"),
        ("open_llm_bbh", 35.96, "hfopenllm_v2/BBH"),
        ("open_llm_math_lvl5", 1.44, "hfopenllm_v2/MATH Level 5"),
        ("open_llm_gpqa", 25.919999999999998, "hfopenllm_v2/GPQA"),
        ("open_llm_musr", 38.14, "hfopenllm_v2/MUSR"),
        ("open_llm_mmlu_pro", 11.64, "hfopenllm_v2/MMLU-PRO"),
    ]
    assert answer["unmapped"] == [] and answer["not_fitted"] == []


def test_a_real_inspect_log(app: RunningApp) -> None:
    path = FIXTURES / "inspect" / "data_arc_qwen.json"
    answer = upload(app, path.name, path.read_bytes()).json()
    assert {k: answer[k] for k in ("format", "tool", "model", "probes", "not_fitted")} == {
        "format": "inspect",
        "tool": "inspect_ai",
        "model": "ollama/qwen2.5:0.5b",
        "probes": [],
        "not_fitted": ["arc_easy (inspect_evals/arc_easy)"],
    }


def test_upload_limits_are_served_for_the_page(app: RunningApp) -> None:
    answer = app.get("/api/results")
    assert answer.status == 200
    assert answer.json()["max_bytes"] == MAX_UPLOAD_BYTES
    assert answer.json()["accept"] == [".json", ".eval", ".csv"]


def test_a_file_of_several_models_answers_one_and_lists_them(app: RunningApp) -> None:
    data = b"model,benchmark,score\na,hle,10\nb,hle,20\nb,gpqa_diamond,50\n"
    first = upload(app, "two.csv", data).json()
    assert (first["model"], first["models"]) == ("a", ["a", "b"])
    assert [(p["benchmark"], p["score"]) for p in first["probes"]] == [("hle", 10.0)]
    second = upload(app, "two.csv", data, model="b").json()
    assert [(p["benchmark"], p["score"]) for p in second["probes"]] == [
        ("hle", 20.0),
        ("gpqa_diamond", 50.0),
    ]
    missing = upload(app, "two.csv", data, model="c")
    assert missing.status == 400
    assert missing.json()["error"] == "results: no results for model 'c' (the files hold: a, b)"


def test_the_name_is_a_file_name_never_a_path(app: RunningApp, tmp_path: Path) -> None:
    answer = upload(app, "../../etc/acme.csv", TIDY)
    assert answer.status == 200 and answer.json()["file"] == "acme.csv"
    windows = upload(app, "C:\\Users\\me\\acme.csv", TIDY)
    assert windows.json()["file"] == "acme.csv"
    for name, message in (
        ("", "parameter 'name' is required"),
        ("../", "parameter 'name' is required: the uploaded file's name"),
        ("a\x1b[2J.csv", "parameter 'name' holds control characters"),
        ("x" * 300 + ".csv", "parameter 'name' is longer than 255 characters"),
    ):
        bad = upload(app, name, TIDY)
        assert (bad.status, bad.json()["error"]) == (400, message), name


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        (
            "results_2026.json",
            LM_EVAL.read_bytes()[:5000],
            "results_2026.json: truncated JSON: Unterminated string starting at line 139 "
            "column 22 (was the file cut short while being written or copied?)",
        ),
        ("cut.csv", TIDY[:-25], "cut.csv, line 4: score is empty"),
        ("empty.json", b"", "empty.json: the file is empty"),
        (
            "range.csv",
            b"model,benchmark,score\nm,hle,130\n",
            "range.csv, benchmark: score 130 for hle lies outside its range 0 to 100 (percent "
            "benchmarks take 0-100: is the score a fraction or on another scale, or the task "
            "mapped on the wrong benchmark?)",
        ),
        (
            "typo.csv",
            b"model,benchmark,score\nm,gpqa_diamnd,30\n",
            f"typo.csv: no benchmark of snapshot {BUNDLED_VERSION} in the file; it names "
            "'gpqa_diamnd' (did you mean: gpqa_diamond, gpqa_main, gaia? write a benchmark id "
            "or name as in the Matrix tab)",
        ),
        (
            "twice.csv",
            b"model,benchmark,score\nm,hle,10\nm,HLE,12\n",
            "twice.csv: hle is scored twice with different values: 10 in twice.csv (hle) and 12 "
            "in twice.csv (HLE) (keep one of the two files, or map one task elsewhere with --map)",
        ),
    ],
)
def test_a_file_that_cannot_be_used_is_a_400_naming_it(
    app: RunningApp, name: str, data: bytes, message: str
) -> None:
    answer = upload(app, name, data)
    assert answer.status == 400
    assert answer.json() == {"error": message}


def test_an_oversize_file_is_413_before_it_is_read(app: RunningApp) -> None:
    request = (
        b"POST /api/results?name=big.json HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/octet-stream\r\n"
        b"Content-Length: %d\r\n\r\n" % (MAX_UPLOAD_BYTES + 1)
    )
    ((status, body),) = answers(exchange(app, request + b"{"))  # the server closes
    assert status == 413
    assert error(body) == (
        f"results file over {MAX_UPLOAD_BYTES // 2**20} MiB ({MAX_UPLOAD_BYTES} bytes), the "
        "most the page reads; use `benchpress predict --from FILE` for larger files"
    )


def test_a_file_over_the_small_cap_but_under_the_upload_cap_is_read(app: RunningApp) -> None:
    data = b"model,benchmark,score\n" + b"acme,hle,10\n" * 6000  # one score, 6,000 times
    assert MAX_BODY_BYTES < len(data) < MAX_UPLOAD_BYTES
    answer = upload(app, "big.csv", data)
    assert answer.status == 200 and answer.json()["probes"][0]["score"] == 10.0
    other = app.post("/api/predict", data)  # every other endpoint keeps the small cap
    assert other.status == 413


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Origin": "http://evil.example"},
    ],
)
def test_other_sites_cannot_upload(app: RunningApp, headers: dict[str, str]) -> None:
    answer = app.request("/api/results?name=a.csv", data=TIDY, headers={**OCTET, **headers})
    assert answer.status == 403
    assert answer.json() == {"error": "the API answers this app's own page only, not other sites"}
    own = app.request(
        "/api/results?name=a.csv",
        data=TIDY,
        headers={**OCTET, "Sec-Fetch-Site": "same-origin", "Origin": app.url},
    )
    assert own.status == 200


def test_a_large_cross_site_body_gets_the_small_cap(app: RunningApp) -> None:
    """Another site's page cannot make this server read megabytes before it is refused."""
    request = (
        b"POST /api/results?name=a.json HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Sec-Fetch-Site: cross-site\r\nContent-Type: application/octet-stream\r\n"
        b"Content-Length: %d\r\n\r\n" % (MAX_BODY_BYTES + 1)
    )
    ((status, body),) = answers(exchange(app, request))
    assert status == 413 and error(body) == f"request body over {MAX_BODY_BYTES} bytes"


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", ""],
)
def test_an_upload_is_the_file_bytes_only(app: RunningApp, content_type: str) -> None:
    """Forms (what another site could send without a preflight) are refused: 415."""
    headers = {"Content-Type": content_type} if content_type else {}
    answer = app.request("/api/results?name=a.csv", data=TIDY, headers=headers)
    assert answer.status == 415
    assert answer.json() == {
        "error": "send the results file's bytes as application/octet-stream (the name in ?name=)"
    }


def test_unknown_parameters_and_methods(app: RunningApp) -> None:
    typo = app.request("/api/results?name=a.csv&modle=x", data=TIDY, headers=OCTET)
    assert typo.json() == {
        "error": "unknown parameter 'modle' for /api/results; expected: model, name, version"
    }
    put = app.request("/api/results?name=a.csv", data=TIDY, headers=OCTET, method="PUT")
    assert put.status == 405
    head = app.request("/api/results", method="HEAD")
    assert head.status == 200 and head.headers["Cache-Control"] == "no-store"


def test_nothing_is_kept(app: RunningApp) -> None:
    """The answer is all there is: the app's home stays empty."""
    home = app.server.catalog.home
    assert upload(app, "acme.csv", TIDY).status == 200
    assert home is not None and list(home.iterdir()) == []


# ----------------------------------------------------------------------------- the browser
def choose_file(driver: Any, path: Path) -> None:
    driver.find_element("id", "results-file").send_keys(str(path))


def probe_inputs(driver: Any) -> list[tuple[str, str]]:
    inputs = driver.find_elements("css selector", "#probe-rows input")
    values = [i.get_attribute("value") for i in inputs]
    return list(zip(values[::2], values[1::2], strict=True))


def assert_no_markup_ran(driver: Any) -> None:
    assert driver.execute_script("return window.__alerts") == []
    assert driver.find_elements("css selector", "main img") == []
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe


@pytest.mark.browser
def test_choose_a_tidy_file_and_see_its_prediction(
    app: RunningApp, browser: Any, bp: BenchPress, tmp_path: Path, artifacts: Path
) -> None:
    path = tmp_path / "acme.csv"
    path.write_bytes(TIDY)
    open_page(browser, app.url + "/")
    zone = browser.find_element("id", "drop-zone")
    assert zone.text.startswith(
        "Drop an lm-eval, Inspect or Every Eval Ever results file here, or choose one"
    )
    choose_file(browser, path)
    expected = bp.predict({"gpqa_diamond": 41.5, "mmlu_pro": 55.25, "hle": 7.0})
    wait(browser, lambda d: len(table_rows(d)) == len(expected), "prediction table")
    assert probe_inputs(browser) == [("gpqa_diamond", "41.5"), ("mmlu_pro", "55.25"), ("hle", "7")]
    cell = browser.find_element(
        "css selector", '#prediction-table tr[data-benchmark="ifeval"] td.score'
    )
    assert float(cell.get_attribute("data-value")) == expected["ifeval"].score
    card = browser.find_element("id", "upload-card")
    assert card.find_element("css selector", "h2").text == "From acme.csv"
    assert "model acme-7b · 3 probe scores" in card.text
    rows = card.find_elements("css selector", "#upload-probes tbody tr")
    assert [r.get_attribute("data-benchmark") for r in rows] == ["gpqa_diamond", "mmlu_pro", "hle"]
    not_fitted = card.find_element("id", "upload-not-fitted")
    assert not_fitted.is_displayed() and not_fitted.text == "agieval"
    assert "scores=gpqa_diamond=41.5,mmlu_pro=55.25,hle=7" in browser.current_url
    assert_no_markup_ran(browser)
    browser.save_screenshot(str(artifacts / "predict_from_file.png"))


@pytest.mark.browser
def test_an_lm_eval_file_fills_the_probes_and_lists_what_it_cannot_use(
    app: RunningApp, browser: Any, bp: BenchPress, tmp_path: Path, artifacts: Path
) -> None:
    path = tmp_path / "results_2026-01-21T03-44-18.json"
    path.write_bytes(lm_eval_with_gsm8k())
    open_page(browser, app.url + "/")
    choose_file(browser, path)
    expected = bp.predict({"gsm8k": 40.0})
    wait(browser, lambda d: len(table_rows(d)) == len(expected), "prediction table")
    assert probe_inputs(browser) == [("gsm8k", "40")]
    cell = browser.find_element(
        "css selector", '#prediction-table tr[data-benchmark="math"] td.score'
    )
    assert float(cell.get_attribute("data-value")) == expected["math"].score
    card = browser.find_element("id", "upload-card")
    assert "lm-evaluation-harness 0.4.9.2 · model RylanSchaeffer/" in card.text
    unmapped = card.find_element("id", "upload-unmapped")
    assert unmapped.is_displayed()
    assert unmapped.text.splitlines() == ["math_perturbed_full", "math_rephrased_full"]
    assert card.find_element("id", "upload-notes").text == f"gsm8k: {GSM8K_NOTE}"
    assert "Unmapped: 2 tasks no benchmark of ours is mapped to" in card.text
    assert_no_markup_ran(browser)
    browser.save_screenshot(str(artifacts / "predict_from_lm_eval.png"))

    # the file as lm-eval wrote it maps onto nothing here: the probes stay, the tasks are listed
    choose_file(browser, LM_EVAL)
    wait(browser, lambda d: LM_EVAL.name in card.find_element("css selector", "h2").text, "card")
    assert card.find_element("css selector", ".inline-note").text.startswith(
        f"Nothing in {LM_EVAL.name} maps onto a benchmark of snapshot {BUNDLED_VERSION}'s fit"
    )
    assert probe_inputs(browser) == [("gsm8k", "40")]


@pytest.mark.browser
def test_a_file_dropped_on_the_zone_is_read(app: RunningApp, browser: Any, bp: BenchPress) -> None:
    """A drop event carrying a file (as the browser makes it when a file is dragged in)."""
    open_page(browser, app.url + "/")
    browser.execute_script(
        """
        const file = new File([arguments[0]], "dropped.csv", {type: "text/csv"});
        const data = new DataTransfer();
        data.items.add(file);
        const zone = document.getElementById("drop-zone");
        for (const kind of ["dragenter", "dragover", "drop"]) {
          zone.dispatchEvent(new DragEvent(kind, {dataTransfer: data, bubbles: true,
                                                   cancelable: true}));
        }
        """,
        TIDY.decode(),
    )
    expected = bp.predict({"gpqa_diamond": 41.5, "mmlu_pro": 55.25, "hle": 7.0})
    wait(browser, lambda d: len(table_rows(d)) == len(expected), "prediction table")
    assert probe_inputs(browser) == [("gpqa_diamond", "41.5"), ("mmlu_pro", "55.25"), ("hle", "7")]
    card = browser.find_element("id", "upload-card")
    assert card.find_element("css selector", "h2").text == "From dropped.csv"
    zone = browser.find_element("id", "drop-zone")
    assert "over" not in zone.get_attribute("class")


@pytest.mark.browser
def test_a_bad_file_shows_the_readers_message(
    app: RunningApp, browser: Any, tmp_path: Path, artifacts: Path
) -> None:
    path = tmp_path / "results_cut.json"
    path.write_bytes(LM_EVAL.read_bytes()[:5000])
    open_page(browser, app.url + "/?scores=hle=20")
    wait(browser, lambda d: len(table_rows(d)) > 0, "prediction table")
    choose_file(browser, path)
    shown = browser.find_element("id", "results-error")
    wait(browser, lambda d: shown.is_displayed(), "error shown")
    assert shown.text == (
        "results_cut.json: truncated JSON: Unterminated string starting at line 139 column 22 "
        "(was the file cut short while being written or copied?)"
    )
    assert probe_inputs(browser) == [("hle", "20")]  # the probes typed stay as they were
    assert not browser.find_element("id", "upload-card").is_displayed()
    browser.save_screenshot(str(artifacts / "predict_from_bad_file.png"))


@pytest.mark.browser
def test_names_in_a_file_stay_text(app: RunningApp, browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "hostile.csv"
    rows = [
        "model,benchmark,score",
        f'"{HOSTILE_NAME}",hle,12',
        f'"{HOSTILE_NAME}",gpqa_diamond,40',
        '"<b onmouseover=alert(2)>m</b>",hle,30',
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    open_page(browser, app.url + "/")
    choose_file(browser, path)
    card = browser.find_element("id", "upload-card")
    wait(browser, lambda d: card.is_displayed(), "upload card")
    assert f"model {HOSTILE_NAME} · 2 probe scores" in card.text
    select = card.find_element("id", "upload-model")
    options = [o.text for o in select.find_elements("css selector", "option")]
    assert options == [HOSTILE_NAME, "<b onmouseover=alert(2)>m</b>"]
    assert card.find_elements("css selector", "b") == []
    assert_no_markup_ran(browser)


def test_the_drop_zone_has_a_keyboard_file_input(app: RunningApp) -> None:
    page = app.get("/").body.decode()
    assert '<input id="results-file" type="file" accept=".json,.eval,.csv"' in page
    assert '<label id="drop-zone" class="drop-zone" for="results-file">' in page
    assert json.loads(app.get("/api/results").body)["accept"] == [".json", ".eval", ".csv"]
