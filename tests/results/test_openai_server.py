"""The loopback OpenAI-compatible test server (tests/support/openai_server.py), first on its
own, then with the installed lm-evaluation-harness's API models run against it.

lm-eval runs in a process of its own, offline, like tests/results/fresh_files.py runs it:
`simple_evaluate` over the local task folder only, its results file written by its
`EvaluationTracker`. The tasks are fresh_files' arithmetic ones (10 documents "What is i + i?",
i = 0..9): `bp_fresh_mc` (2-shot multiple choice over 2i, 2i+1, 2i+3, the first right: scored
by log-likelihood) and `bp_fresh_gen` (generate until a newline; the target is "lol" for i < 3,
else 2i). The server's default model answers A + B except when A + B leaves 1 when divided by
3 (i = 2, 5, 8: it says 2i + 1), so acc = acc_norm = 0.7 and exact_match = 0.5.

What lm-eval 0.4.13 does, as these tests pin it:

- `local-completions` with `tokenizer_backend=remote` reads the vLLM tokenizer endpoints
  (/tokenizer_info twice, /tokenize twice per log-likelihood request); with
  `tokenized_requests=False` it sends strings, decoding its token ids through /detokenize
  first; with True it sends lists of token ids. Both give the same scores.
- log-likelihood requests are `echo=True, logprobs=1, max_tokens=1, temperature=0`; the
  generated token is dropped (`token_logprobs[ctxlen:-1]`).
- `max_retries=N` means N attempts in all (tenacity's stop_after_attempt; 1 s, 2 s... waits
  between them); any failure of the last attempt ends the whole run with the client's
  exception: 401 and 500 as `requests.exceptions.HTTPError`, a stall as `ReadTimeout` after
  `timeout` seconds. The remote tokenizer retries 3 times without waiting, whatever
  max_retries says.
- The key: completions requests carry `Authorization: Bearer $OPENAI_API_KEY`; the remote
  tokenizer never sends it, only `auth_token=` from the model args, which lm-eval then writes
  into the results file (config.model_args). So against a server that guards every endpoint,
  `tokenizer_backend=remote` needs the key in the model args; vLLM's `--api-key` guards only
  /v1/* (key_scope="v1" here), where the environment variable alone works.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.results.fresh_files import offline_env, write_lm_eval_tasks
from tests.support.openai_server import (
    BOS_ID,
    BOS_TOKEN,
    EOS_ID,
    EOS_TOKEN,
    LOGPROB_EXPECTED,
    OpenAIServer,
    arithmetic_answer,
    decode,
    encode,
)
from tests.support.openai_server_fixtures import (  # noqa: F401 - fixtures
    make_openai_server,
    openai_server,
)

MODEL = "bp-test"
RUN_TIMEOUT = 300  # seconds; a run takes about 2 s (lm-eval's import: more on a loaded machine)
# seconds a failing run must end within, on a loaded machine: one that waited out a stalled
# server would take an hour, and the requests each test expects show there was no retry
FAILS_WITHIN = 120

DRIVER = """
import json
import sys

from lm_eval import simple_evaluate
from lm_eval.loggers import EvaluationTracker
from lm_eval.tasks import TaskManager

spec = json.loads(sys.argv[1])
tracker = EvaluationTracker(output_path=spec["out"])
results = simple_evaluate(
    model=spec["model"],
    model_args=spec["model_args"],
    tasks=spec["tasks"],
    task_manager=TaskManager(include_path=spec["tasks_dir"], include_defaults=False),
    evaluation_tracker=tracker,
    apply_chat_template=spec["apply_chat_template"],
)
tracker.save_results_aggregated(results=results, samples=None)
"""


@dataclass(frozen=True)
class LmEvalRun:
    returncode: int
    seconds: float
    stdout: str
    stderr: str
    out: Path  # lm-eval's output folder

    @property
    def results(self) -> dict[str, Any]:
        (path,) = self.out.rglob("results_*.json")
        return json.loads(path.read_bytes())

    def written(self) -> str:
        """Everything lm-eval wrote: its output files, stdout and stderr."""
        files = [p.read_text(errors="replace") for p in self.out.rglob("*") if p.is_file()]
        return "\n".join([*files, self.stdout, self.stderr])

    def check(self) -> LmEvalRun:
        assert self.returncode == 0, (
            f"lm-eval failed:\n{self.stdout[-2000:]}\n{self.stderr[-4000:]}"
        )
        return self


@pytest.fixture(scope="session")
def lm_eval_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_lm_eval_tasks(tmp_path_factory.mktemp("openai_server_tasks"))


def model_args(base_url: str, **extra: object) -> str:
    args: dict[str, object] = {
        "model": MODEL,
        "base_url": base_url,
        "tokenizer_backend": "remote",
        "tokenized_requests": False,
        "max_retries": 1,
        "timeout": 5,
        **extra,
    }
    return ",".join(f"{key}={value}" for key, value in args.items())


def run_lm_eval(
    root: Path,
    tasks_dir: Path,
    *,
    args: str,
    tasks: list[str],
    model: str = "local-completions",
    apply_chat_template: bool = False,
    api_key: str | None = None,
) -> LmEvalRun:
    root.mkdir(parents=True, exist_ok=True)
    driver = root / "run_lm_eval.py"
    driver.write_text(DRIVER, encoding="utf-8")
    spec = {
        "out": str(root / "out"),
        "tasks_dir": str(tasks_dir),
        "model": model,
        "model_args": args,
        "tasks": tasks,
        "apply_chat_template": apply_chat_template,
    }
    env = offline_env(root)
    env.pop("OPENAI_API_KEY", None)  # never the developer's own key
    if api_key is not None:
        env["OPENAI_API_KEY"] = api_key
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(driver), json.dumps(spec)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    seconds = time.monotonic() - started
    return LmEvalRun(done.returncode, seconds, done.stdout, done.stderr, root / "out")


def expected_scores(tasks_dir: Path) -> tuple[float, float]:
    """(acc of bp_fresh_mc, exact_match of bp_fresh_gen) the default model implies."""
    rows = [json.loads(line) for line in (tasks_dir / "arith.jsonl").read_text().splitlines()]
    said = [arithmetic_answer(f"Question: {row['question']}\nAnswer:") for row in rows]
    acc = sum(s == row["choices"][row["label"]] for s, row in zip(said, rows, strict=True))
    exact = sum(s == row["answer"] for s, row in zip(said, rows, strict=True))
    return acc / len(rows), exact / len(rows)


# ---- the server on its own


def post(url: str, payload: dict[str, Any], key: str | None = None) -> requests.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return requests.post(url, json=payload, headers=headers, timeout=10)


def test_the_default_model_is_right_seven_times_in_ten(lm_eval_tasks: Path) -> None:
    assert expected_scores(lm_eval_tasks) == (0.7, 0.5)
    assert arithmetic_answer("Question: What is 3 + 4?\nAnswer:") == "8"  # 7 % 3 == 1
    assert arithmetic_answer("Question: What is 3 + 3?\nAnswer:") == "6"
    assert arithmetic_answer("Hello") == "I don't know."


def test_tokenizer_is_byte_level_and_lossless() -> None:
    text = f"{BOS_TOKEN}héllo{EOS_TOKEN}"
    ids = encode(text)
    assert ids == [BOS_ID, 104, 195, 169, 108, 108, 111, EOS_ID]
    assert decode(ids) == text
    assert decode(ids, skip_special_tokens=True) == "héllo"
    assert encode("a", add_special_tokens=True) == [BOS_ID, 97]


def test_completions_take_every_prompt_form(openai_server: OpenAIServer) -> None:  # noqa: F811
    question = "Question: What is 2 + 3?\nAnswer:"
    forms = {
        "string": question,
        "strings": [question, "Question: What is 1 + 0?\nAnswer:"],
        "ids": encode(question),
        "lists of ids": [encode(question), encode("Question: What is 1 + 0?\nAnswer:")],
    }
    for name, prompt in forms.items():
        done = post(
            openai_server.completions_url, {"model": MODEL, "prompt": prompt, "stop": ["\n"]}
        )
        assert done.status_code == 200, (name, done.text)
        body = done.json()
        texts = [c["text"] for c in sorted(body["choices"], key=lambda c: c["index"])]
        assert texts == (["5", "2"] if name in ("strings", "lists of ids") else ["5"]), name
        assert body["object"] == "text_completion" and body["model"] == MODEL
        assert body["usage"]["total_tokens"] > body["usage"]["prompt_tokens"] > 0
    cut = post(
        openai_server.completions_url, {"prompt": "Question: What is 50 + 50?", "max_tokens": 2}
    )
    assert cut.json()["choices"][0] | {"logprobs": None} == {
        "index": 0,
        "text": "10",
        "logprobs": None,
        "finish_reason": "length",
        "stop_reason": None,
    }
    refused = post(openai_server.completions_url, {"model": "other", "prompt": "x"})
    assert refused.status_code == 404 and "does not exist" in refused.json()["error"]["message"]
    bad = post(openai_server.completions_url, {"prompt": [1, "x"]})
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"


def test_echoed_logprobs_favour_the_models_answer(openai_server: OpenAIServer) -> None:  # noqa: F811
    context = "Question: What is 2 + 2?\nAnswer:"  # the model says 5
    scores = {}
    for choice in (" 4", " 5", " 7"):
        payload = {
            "model": MODEL,
            "prompt": context + choice,
            "echo": True,
            "logprobs": 1,
            "max_tokens": 1,
            "temperature": 0,
        }
        (answer,) = post(openai_server.completions_url, payload).json()["choices"]
        logprobs = answer["logprobs"]
        n = len(encode(context + choice))
        assert answer["text"].startswith(context + choice)
        assert len(logprobs["token_logprobs"]) == len(logprobs["top_logprobs"]) == n + 1
        assert logprobs["token_logprobs"][0] is None and logprobs["top_logprobs"][0] is None
        assert "".join(logprobs["tokens"][:n]) == context + choice
        tail = slice(len(encode(context)), -1)  # what lm-eval's parse_logprobs sums
        greedy = all(
            lp == max(top.values())
            for lp, top in zip(
                logprobs["token_logprobs"][tail], logprobs["top_logprobs"][tail], strict=True
            )
        )
        scores[choice] = (sum(logprobs["token_logprobs"][tail]), greedy)
    assert scores[" 5"] == (2 * LOGPROB_EXPECTED, True)
    assert scores[" 4"][0] == scores[" 7"][0] < scores[" 5"][0]
    assert not scores[" 4"][1] and not scores[" 7"][1]


def test_chat_answers_the_last_user_message(make_openai_server) -> None:  # noqa: F811
    server = make_openai_server(answer=lambda asked: asked.upper())
    messages = [
        {"role": "system", "content": "be loud"},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "FIRST"},
        {"role": "user", "content": [{"type": "text", "text": "second"}]},
    ]
    done = post(server.chat_url, {"model": MODEL, "messages": messages, "max_tokens": 50})
    body = done.json()
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "SECOND"}
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["object"] == "chat.completion"
    assert body["usage"]["completion_tokens"] == len("SECOND") + 1  # and the eos token
    assert body["usage"]["prompt_tokens"] > len("first second")
    stopped = post(server.chat_url, {"messages": messages[-1:], "stop": ["C"]}).json()
    assert stopped["choices"][0]["message"]["content"] == "SE"


def test_lm_eval_remote_tokenizer_reads_the_server(openai_server: OpenAIServer) -> None:  # noqa: F811
    from lm_eval.utils import RemoteTokenizer, check_remote_tokenizer_support

    assert check_remote_tokenizer_support(openai_server.completions_url)
    tokenizer = RemoteTokenizer(openai_server.completions_url, timeout=5)
    assert (tokenizer.eos_token, tokenizer.eos_token_id) == (EOS_TOKEN, EOS_ID)
    assert (tokenizer.bos_token, tokenizer.bos_token_id) == (BOS_TOKEN, BOS_ID)
    assert tokenizer.encode("hé") == [104, 195, 169]
    assert tokenizer.decode([104, 105, EOS_ID]) == f"hi{EOS_TOKEN}"
    assert tokenizer.batch_decode([[104], [105]]) == ["h", "i"]
    chat = tokenizer.apply_chat_template([{"role": "user", "content": "hi"}])
    assert chat == "<|user|>\nhi\n<|assistant|>\n"
    done = post(f"{openai_server.url}/tokenize", {"model": MODEL, "prompt": "hi"}).json()
    assert done == {
        "count": 3,
        "max_model_len": 4096,
        "tokens": [BOS_ID, 104, 105],
        "token_strs": None,
    }


def test_the_key_guards_every_endpoint(make_openai_server) -> None:  # noqa: F811
    key = "bp-test-key-guard"
    server = make_openai_server(api_key=key)
    for header in (None, "Bearer wrong", key, f"Basic {key}"):
        done = requests.get(
            server.models_url, headers={"Authorization": header} if header else {}, timeout=5
        )
        assert done.status_code == 401
        error = done.json()["error"]
        assert error["code"] == "invalid_api_key" and error["type"] == "invalid_request_error"
        assert key not in done.text
    assert post(f"{server.url}/tokenize", {"prompt": "x"}).status_code == 401
    models = requests.get(server.models_url, headers={"Authorization": f"Bearer {key}"}, timeout=5)
    assert models.status_code == 200
    assert [m["id"] for m in models.json()["data"]] == [MODEL]
    assert server.authorizations == [
        None,
        "Bearer wrong",
        key,
        f"Basic {key}",
        None,
        f"Bearer {key}",
    ]
    vllm_like = make_openai_server(api_key=key, key_scope="v1")  # vLLM's --api-key
    assert post(f"{vllm_like.url}/tokenize", {"prompt": "x"}).status_code == 200
    assert post(vllm_like.completions_url, {"prompt": "x"}).status_code == 401


def test_concurrent_requests_all_get_their_own_answer(openai_server: OpenAIServer) -> None:  # noqa: F811
    before = len(openai_server.requests)
    answers: dict[int, str] = {}
    errors: list[BaseException] = []

    def ask(i: int) -> None:
        try:
            with requests.Session() as session:
                for j in range(4):
                    n = 10 * i + j
                    done = session.post(
                        openai_server.completions_url,
                        json={"prompt": f"Question: What is {n} + 0?\nAnswer:", "stop": "\n"},
                        timeout=10,
                    )
                    answers[n] = done.json()["choices"][0]["text"]
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors
    assert answers == {n: arithmetic_answer(f"Question: What is {n} + 0?") for n in answers}
    assert len(answers) == 64
    new = openai_server.requests[before:]
    assert len(new) == 64 and {r.status for r in new} == {200}


def test_stalled_and_failing_servers(make_openai_server) -> None:  # noqa: F811
    stalled = make_openai_server(stall_after=1)
    assert post(stalled.completions_url, {"prompt": "x", "max_tokens": 1}).status_code == 200
    idle = requests.Session()  # an idle keep-alive connection must not hold up stop()
    idle.get(stalled.models_url, timeout=5)
    started = time.monotonic()
    with pytest.raises(requests.exceptions.ReadTimeout):
        requests.post(stalled.completions_url, json={"prompt": "x"}, timeout=0.5)
    assert time.monotonic() - started < 60  # our 0.5 s timeout, not the stall (an hour)
    stalled.stop(timeout=60)  # wakes the stalled request and closes the idle connection
    assert stalled.handlers_running == 0  # none left waiting out the 60 s
    assert [r.status for r in stalled.requests] == [200, 200, None]
    idle.close()

    failing = make_openai_server(fail_after=1, fail_with=503)
    statuses = [
        post(failing.chat_url, {"messages": [{"role": "user", "content": "x"}]}).status_code
        for _ in range(3)
    ]
    assert statuses == [200, 503, 503]
    assert (
        post(f"{failing.url}/tokenize", {"prompt": "x"}).status_code == 200
    )  # only completions fail


# ---- lm-eval against the server


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tokenized", "extra", "completion_requests"),
    [
        (False, {}, 40),  # strings: lm-eval detokenizes its token ids first
        (True, {}, 40),  # lists of token ids
        (True, {"batch_size": 4, "num_concurrent": 3}, 11),  # batches of 4, aiohttp, 3 at once
    ],
    ids=["strings", "token-ids", "batched-concurrent"],
)
def test_local_completions_scores_exactly(
    openai_server: OpenAIServer,  # noqa: F811
    lm_eval_tasks: Path,
    tmp_path: Path,
    tokenized: bool,
    extra: dict[str, object],
    completion_requests: int,
) -> None:
    before = len(openai_server.requests)
    args = model_args(openai_server.completions_url, tokenized_requests=tokenized, **extra)
    run = run_lm_eval(tmp_path, lm_eval_tasks, args=args, tasks=["bp_fresh_mc", "bp_fresh_gen"])
    results = run.check().results["results"]
    acc, exact = expected_scores(lm_eval_tasks)
    assert results["bp_fresh_mc"]["acc,none"] == acc == 0.7
    assert results["bp_fresh_mc"]["acc_norm,none"] == 0.7
    assert results["bp_fresh_gen"]["exact_match,none"] == exact == 0.5

    new = openai_server.requests[before:]
    counts = {path: sum(r.path == path for r in new) for path in {r.path for r in new}}
    assert {r.status for r in new} == {200}
    assert counts["/v1/completions"] == completion_requests
    assert counts["/tokenizer_info"] == 2
    assert counts["/tokenize"] == 60 + (10 if tokenized else 0)  # 2 per choice (+ gen prompts)
    assert counts.get("/detokenize", 0) == (0 if tokenized else 30)
    payloads = [r.payload for r in new if r.path == "/v1/completions"]
    scoring = [p for p in payloads if p.get("echo")]
    assert {(p["logprobs"], p["max_tokens"], p["temperature"], p["seed"]) for p in scoring} == {
        (1, 1, 0, 1234)
    }
    prompt = scoring[0]["prompt"]
    if tokenized:
        assert isinstance(prompt, list) and all(isinstance(p, list) for p in prompt)
    else:
        assert isinstance(prompt, str) and prompt.startswith("Question: ")
    generating = [p for p in payloads if not p.get("echo")]
    # the eos string joins the stop strings, except on the concurrent (aiohttp) path
    stops = {tuple(p["stop"]) for p in generating}
    assert stops == ({("\n",)} if extra else {("\n", EOS_TOKEN)})
    assert {p["max_tokens"] for p in generating} == {256}
    assert {r.authorization for r in new if r.path.startswith("/v1")} == {"Bearer "}


@pytest.mark.slow
def test_local_chat_completions_scores_exactly(
    openai_server: OpenAIServer,  # noqa: F811
    lm_eval_tasks: Path,
    tmp_path: Path,
) -> None:
    before = len(openai_server.requests)
    args = f"model={MODEL},base_url={openai_server.chat_url},max_retries=1,timeout=5"
    run = run_lm_eval(
        tmp_path,
        lm_eval_tasks,
        args=args,
        tasks=["bp_fresh_gen"],
        model="local-chat-completions",
        apply_chat_template=True,
    )
    results = run.check().results["results"]
    assert results["bp_fresh_gen"]["exact_match,none"] == expected_scores(lm_eval_tasks)[1]
    new = openai_server.requests[before:]
    assert [r.path for r in new] == ["/v1/chat/completions"] * 10  # no tokenizer at all
    first = new[0].payload
    assert first["messages"] == [
        {"role": "user", "content": first["messages"][0]["content"]}
    ] and first["messages"][0]["content"].startswith("Question: What is")
    assert first["stop"] == ["\n"]  # no eos string without a tokenizer


def test_local_chat_completions_refuses_log_likelihood(
    openai_server: OpenAIServer,  # noqa: F811
) -> None:
    """lm-eval's chat model refuses multiple-choice tasks before sending anything (a run of
    bp_fresh_mc with it ends with this NotImplementedError)."""
    from lm_eval.models.openai_completions import LocalChatCompletion

    lm = LocalChatCompletion(model=MODEL, base_url=openai_server.chat_url)
    with pytest.raises(NotImplementedError, match="Loglikelihood is not supported for chat"):
        lm.loglikelihood([])


KEY = "bp-test-key-7f3a9c"


@pytest.fixture(scope="module")
def vllm_keyed_server() -> Any:
    """A key on /v1/* only, as vLLM's `--api-key`."""
    with OpenAIServer(api_key=KEY, key_scope="v1") as server:
        yield server


@pytest.fixture(scope="module")
def keyed_server() -> Any:
    """A key on every endpoint, the tokenizer's too."""
    with OpenAIServer(api_key=KEY) as server:
        yield server


@pytest.mark.slow
def test_the_key_from_the_environment_reaches_the_server_only(
    vllm_keyed_server: OpenAIServer, lm_eval_tasks: Path, tmp_path: Path
) -> None:
    before = len(vllm_keyed_server.requests)
    args = model_args(vllm_keyed_server.completions_url)
    run = run_lm_eval(tmp_path, lm_eval_tasks, args=args, tasks=["bp_fresh_gen"], api_key=KEY)
    assert run.check().results["results"]["bp_fresh_gen"]["exact_match,none"] == 0.5
    new = vllm_keyed_server.requests[before:]
    assert {r.authorization for r in new if r.path == "/v1/completions"} == {f"Bearer {KEY}"}
    assert {r.authorization for r in new if not r.path.startswith("/v1")} == {None}
    assert KEY not in run.written()


@pytest.mark.slow
def test_a_wrong_key_fails_the_run_at_once(
    vllm_keyed_server: OpenAIServer, lm_eval_tasks: Path, tmp_path: Path
) -> None:
    before = len(vllm_keyed_server.requests)
    args = model_args(vllm_keyed_server.completions_url)
    run = run_lm_eval(tmp_path, lm_eval_tasks, args=args, tasks=["bp_fresh_gen"], api_key="nope")
    assert run.returncode != 0 and run.seconds < FAILS_WITHIN
    assert "requests.exceptions.HTTPError: 401 Client Error: Unauthorized" in run.stderr
    assert "invalid_api_key" in run.stderr  # lm-eval logs the server's error body
    new = [r for r in vllm_keyed_server.requests[before:] if r.path == "/v1/completions"]
    assert [(r.status, r.authorization) for r in new] == [(401, "Bearer nope")]  # no retry
    assert not list(run.out.rglob("results_*.json"))


def test_the_remote_tokenizer_never_sends_the_environment_key(
    keyed_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the key on every endpoint, `local-completions` with the remote tokenizer fails
    before any completion although OPENAI_API_KEY is right: the tokenizer sends `auth_token`
    only (three attempts, no wait)."""
    from lm_eval.models.openai_completions import LocalCompletionsAPI

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    before = len(keyed_server.requests)
    url = keyed_server.completions_url
    with pytest.raises(RuntimeError, match="tokenizer_info failed after 3 attempts: 401"):
        LocalCompletionsAPI(model=MODEL, base_url=url, tokenizer_backend="remote")
    new = keyed_server.requests[before:]
    assert [(r.path, r.status, r.authorization) for r in new] == [
        ("/tokenizer_info", 401, None)
    ] * 3
    lm = LocalCompletionsAPI(model=MODEL, base_url=url, tokenizer_backend="remote", auth_token=KEY)
    assert lm.tok_encode("hi") == [104, 105]
    assert lm.header == {"Authorization": f"Bearer {KEY}"}


@pytest.mark.slow
def test_auth_token_works_but_lands_in_the_results_file(
    keyed_server: OpenAIServer, lm_eval_tasks: Path, tmp_path: Path
) -> None:
    """The way through a server that guards its tokenizer endpoints: the key in the model
    args too. lm-eval then writes it into the results file (config.model_args)."""
    args = model_args(keyed_server.completions_url, auth_token=KEY)
    run = run_lm_eval(tmp_path, lm_eval_tasks, args=args, tasks=["bp_fresh_gen"], api_key=KEY)
    results = run.check().results
    assert results["results"]["bp_fresh_gen"]["exact_match,none"] == 0.5
    assert f"auth_token={KEY}" in results["config"]["model_args"]


@pytest.mark.slow
def test_a_stalled_server_fails_the_run_after_the_timeout(
    make_openai_server,  # noqa: F811
    lm_eval_tasks: Path,
    tmp_path: Path,
) -> None:
    server = make_openai_server(stall_after=3)
    args = model_args(server.completions_url, timeout=2)
    run = run_lm_eval(tmp_path, lm_eval_tasks, args=args, tasks=["bp_fresh_gen"])
    assert run.returncode != 0 and run.seconds < FAILS_WITHIN
    assert "requests.exceptions.ReadTimeout" in run.stderr and "read timeout=2" in run.stderr
    statuses = [r.status for r in server.requests if r.path == "/v1/completions"]
    assert statuses == [200, 200, 200, None]  # the fourth never answered, never retried
    server.stop(timeout=60)  # the stalled request is still waiting in the server: woken
    assert server.handlers_running == 0


@pytest.mark.slow
def test_a_failing_server_fails_the_run_after_its_retries(
    make_openai_server,  # noqa: F811
    lm_eval_tasks: Path,
    tmp_path: Path,
) -> None:
    server = make_openai_server(fail_after=2, fail_with=500)
    args = model_args(server.completions_url, max_retries=2, timeout=2)
    run = run_lm_eval(tmp_path, lm_eval_tasks, args=args, tasks=["bp_fresh_gen"])
    assert run.returncode != 0 and run.seconds < FAILS_WITHIN
    assert "requests.exceptions.HTTPError: 500 Server Error" in run.stderr
    new = [r for r in server.requests if r.path == "/v1/completions"]
    assert [r.status for r in new] == [200, 200, 500, 500]  # max_retries=2: two attempts
    assert new[3].started - new[2].started >= 0.9  # tenacity waits 1 s before the retry
