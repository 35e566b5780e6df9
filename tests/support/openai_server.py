"""A small OpenAI-compatible server on loopback, answering what vLLM's OpenAI server answers
lm-evaluation-harness's API models (`local-completions`, `local-chat-completions`).

Standard library only: a `ThreadingHTTPServer` (HTTP/1.1 keep-alive, one thread a connection)
in a background thread. Nothing is downloaded: the tokenizer is a byte-level one served by the
vLLM endpoints lm-eval's `tokenizer_backend=remote` reads.

    with OpenAIServer() as server:
        server.url                # http://127.0.0.1:PORT (a free port chosen by the OS)
        server.completions_url    # .../v1/completions: lm-eval's `base_url`
        server.chat_url           # .../v1/chat/completions
        server.counts["/v1/completions"], server.authorizations

Endpoints: `POST /v1/completions`, `POST /v1/chat/completions`, `GET /v1/models`,
`POST /tokenize`, `POST /detokenize`, `GET /tokenizer_info` (vLLM's shapes), `GET /health`.

The model, deterministic throughout (`temperature` and `seed` are accepted and ignored):

- Tokens: each UTF-8 byte is one token (ids 0-255), plus `<|endoftext|>` (EOS_ID, the eos
  token) and `<|startoftext|>` (BOS_ID, the bos token), recognised in text like a Hugging Face
  tokenizer's special tokens. `/tokenize` adds the bos token only when `add_special_tokens`
  is true (vLLM's default; lm-eval sends false). Decoding is lossless.
- Generations: `answer(prompt) -> str` (a constructor argument), cut at the first `stop`
  string and at `max_tokens` tokens. Chat: the same function of the last user message. The
  default, `arithmetic_answer`, answers the last "Question: What is A + B?" of the prompt, and
  is wrong on purpose when A + B leaves 1 when divided by 3 (it says A + B + 1).
- Log-probabilities (`logprobs`, with `echo` for the prompt's tokens, what lm-eval's
  log-likelihood requests ask for): after the last `cue` ("Answer:") in the text so far, the
  model expects spaces, then `answer(text up to and including the cue)`, then a newline or the
  eos token: those tokens get log(0.9), every other token log(0.1 / 257). Before any cue, or
  once the text left the expected answer, every token gets log(1 / 258). So a
  multiple-choice task scores the choice equal to `answer(context)` highest, and `acc` and
  `acc_norm` both pick it (unless another choice is a strict prefix of it: a shorter
  continuation sums fewer log-probs, as with a real model). Choices that all leave the
  expected answer at their first character tie (lm-eval's argmax then takes the first one).
  `top_logprobs` holds the most likely token (and the actual one), so lm-eval's `is_greedy`
  is true on the expected answer.

Failure variants, for tests of clients: `api_key` (every endpoint, or with key_scope="v1" only
the /v1 ones as vLLM's `--api-key` does, answers 401 without `Authorization: Bearer <key>`),
`stall_after=N` (completion requests after the first N wait `stall_seconds`, an hour by
default, or until the server stops, then get no answer), `fail_after=N` with `fail_with`
(completion requests after the first N get that status, 500 by default). "Completion
requests" are those to /v1/completions and /v1/chat/completions that passed the key check.

Hostile variants, for tests of what a client lets out: `redirect_to=URL` (every request is
answered `redirect_status`, 302 by default, with `Location: URL<the request's path>`: a client
that follows it sends its request, and its Authorization header, to that URL) and
`echo_authorization=True` (completion requests that passed the key check get `echo_status`,
500 by default, with an error message that quotes the Authorization header received, as a
careless proxy's error page does).

Misbehaviours, for tests of a client's deadlines and memory cap (`benchpress run`'s task
processes): `drip_models=True` (GET /v1/models is answered one byte every `drip_interval`
seconds, 1 s by default, its status line and headers included: a per-read timeout never
trips), `drip_after=N` with `drip_count` (completion requests after the first N, the next
`drip_count` of them or all, are answered the same way), `huge_answer_bytes=N` (completion
requests get a 200 answer of N bytes, written as it goes: one choice whose `text` is that
long and that has no `logprobs`) and `nonfinite_logprobs=VALUE` (every log-prob a completion
answers, `token_logprobs` and `top_logprobs`, is VALUE: NaN or an infinity, written as
Python's json module writes them, `NaN`, `Infinity`).

Every request is logged (`requests`: method, path, status, the Authorization header as
received, the JSON payload), so tests can see what a client sent and that a key reached the
server. Pytest fixtures: tests/support/openai_server_fixtures.py; lm-eval run against it:
tests/results/test_openai_server.py.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import math
import re
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from tests.support.quiet_server import QuietThreadingHTTPServer

Answer = Callable[[str], str]

EOS_TOKEN = "<|endoftext|>"
BOS_TOKEN = "<|startoftext|>"
EOS_ID = 256
BOS_ID = 257
VOCAB_SIZE = 258
SPECIAL_IDS = {EOS_TOKEN: EOS_ID, BOS_TOKEN: BOS_ID}
SPECIAL_TOKENS = {v: k for k, v in SPECIAL_IDS.items()}
_SPECIAL_SPLIT = re.compile("(" + "|".join(re.escape(t) for t in SPECIAL_IDS) + ")")

LOGPROB_EXPECTED = math.log(0.9)
LOGPROB_UNEXPECTED = math.log(0.1 / (VOCAB_SIZE - 1))
LOGPROB_UNIFORM = -math.log(VOCAB_SIZE)
_SPACE = ord(" ")
_NEWLINE = ord("\n")

# rendered by `render_chat`; served as `chat_template` by /tokenizer_info (Jinja, same output)
CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}\n"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

COMPLETION_PATHS = ("/v1/completions", "/v1/chat/completions")

_QUESTION = re.compile(r"Question:\s*What is\s+(-?\d+)\s*\+\s*(-?\d+)\s*\?")


def arithmetic_answer(prompt: str) -> str:
    """The default model's answer to the last "Question: What is A + B?" of `prompt`: A + B,
    except when A + B leaves 1 when divided by 3, then A + B + 1 (wrong on purpose)."""
    found = _QUESTION.findall(prompt)
    if not found:
        return "I don't know."
    total = int(found[-1][0]) + int(found[-1][1])
    return str(total + 1 if total % 3 == 1 else total)


def encode(text: str, add_special_tokens: bool = False) -> list[int]:
    """Token ids of `text`: one a UTF-8 byte, special tokens' strings one id each; the bos
    token first when `add_special_tokens`."""
    ids = [BOS_ID] if add_special_tokens else []
    for part in _SPECIAL_SPLIT.split(text):
        if part in SPECIAL_IDS:
            ids.append(SPECIAL_IDS[part])
        else:
            ids.extend(part.encode("utf-8"))
    return ids


def decode(ids: Iterable[int], skip_special_tokens: bool = False) -> str:
    """The text of token ids (special tokens as their strings unless skipped)."""
    parts: list[str] = []
    run = bytearray()
    for token in ids:
        if 0 <= token < 256:
            run.append(token)
            continue
        if token not in SPECIAL_TOKENS:
            raise ValueError(f"token id {token} is out of vocabulary (0..{VOCAB_SIZE - 1})")
        parts.append(run.decode("utf-8", errors="replace"))
        run.clear()
        if not skip_special_tokens:
            parts.append(SPECIAL_TOKENS[token])
    parts.append(run.decode("utf-8", errors="replace"))
    return "".join(parts)


def token_string(token: int) -> str:
    """One token as OpenAI's `logprobs.tokens` spell it (a lone non-ASCII byte as bytes:\\xNN)."""
    if token in SPECIAL_TOKENS:
        return SPECIAL_TOKENS[token]
    return chr(token) if token < 128 else f"bytes:\\x{token:02x}"


def render_chat(messages: Sequence[dict[str, Any]], add_generation_prompt: bool = True) -> str:
    """`CHAT_TEMPLATE` rendered (what the usage counts as the prompt of a chat request)."""
    text = "".join(f"<|{m.get('role', '')}|>\n{message_text(m.get('content'))}\n" for m in messages)
    return text + ("<|assistant|>\n" if add_generation_prompt else "")


def message_text(content: Any) -> str:
    """A chat message's text: a string, or the text parts of a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return str(content)


def score_tokens(ids: Sequence[int], answer: Answer, cue: str) -> list[tuple[float, int, float]]:
    """(log-prob of ids[i], the most likely token there, its log-prob) for i = 1 ..
    len(ids) - 1, by the rule in the module's docstring."""
    cue_ids = list(cue.encode("utf-8"))
    expected: list[int] | None = None  # answer(text up to the last cue), None before a cue
    matched = 0  # how many of its tokens the text after the cue has said so far
    off = False  # the text after the cue left the expected answer
    scored: list[tuple[float, int, float]] = []
    for i in range(1, len(ids)):
        if cue_ids and i >= len(cue_ids) and list(ids[i - len(cue_ids) : i]) == cue_ids:
            expected, matched, off = encode(answer(decode(ids[:i]))), 0, False
        token = ids[i]
        if expected is None or off:
            scored.append((LOGPROB_UNIFORM, token, LOGPROB_UNIFORM))  # all tokens tie
            continue
        if matched < len(expected):
            top = expected[matched]
            likely = {top, _SPACE} if matched == 0 else {top}  # spaces may come first
        else:
            top = EOS_ID
            likely = {_NEWLINE, EOS_ID}
        logprob = LOGPROB_EXPECTED if token in likely else LOGPROB_UNEXPECTED
        scored.append((logprob, top, LOGPROB_EXPECTED))
        if matched < len(expected) and token == expected[matched]:
            matched += 1
        elif not (matched == 0 and token == _SPACE):
            off = True
    return scored


class ApiError(Exception):
    """Answered as an OpenAI-style error JSON with `status`."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", code=None):
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.code = code


@dataclass
class RequestRecord:
    """One request as the server saw it."""

    method: str
    path: str
    authorization: str | None  # the header as received, None when absent
    payload: Any = None  # the parsed JSON body (None: no body, or not JSON)
    status: int | None = None  # None: never answered (stalled, or the client went away)
    started: float = field(default_factory=time.monotonic)


class _Server(QuietThreadingHTTPServer):
    request_queue_size = 128
    owner: OpenAIServer


class OpenAIServer:
    """An OpenAI-compatible test server; a context manager (`start()` / `stop()` also work).

    answer: the generation for a prompt (completions) or the last user message (chat).
    api_key: when set, requests need `Authorization: Bearer <api_key>` (else 401); on every
        endpoint (key_scope="all") or only on /v1/* (key_scope="v1", vLLM's `--api-key`).
    model_names: the served names (`GET /v1/models`); a request naming another model gets 404.
    stall_after / stall_seconds: completion requests after the first `stall_after` wait
        `stall_seconds` (or until `stop()`) and get no answer.
    fail_after / fail_with: completion requests after the first `fail_after` get `fail_with`.
    max_model_len: longer prompts (plus max_tokens) are refused with 400, as by vLLM.
    cue: where the log-prob model expects `answer(...)` to follow (see the module docstring).
    redirect_to / redirect_status: every request is redirected to `redirect_to` + its path.
    echo_authorization / echo_status: completion requests get `echo_status` with a body that
        quotes the Authorization header received.
    drip_models / drip_after / drip_count / drip_interval, huge_answer_bytes,
        nonfinite_logprobs: the misbehaviours of the module docstring.
    serve_tokenizer_info: False answers GET /tokenizer_info with 404, as llama.cpp's server
        (which has no such route) does.
    """

    def __init__(
        self,
        answer: Answer = arithmetic_answer,
        *,
        api_key: str | None = None,
        key_scope: str = "all",
        model_names: Sequence[str] = ("bp-test",),
        stall_after: int | None = None,
        stall_seconds: float = 3600.0,
        fail_after: int | None = None,
        fail_with: int = 500,
        max_model_len: int = 4096,
        cue: str = "Answer:",
        host: str = "127.0.0.1",
        port: int = 0,
        redirect_to: str | None = None,
        redirect_status: int = 302,
        echo_authorization: bool = False,
        echo_status: int = 500,
        drip_models: bool = False,
        drip_after: int | None = None,
        drip_count: int | None = None,
        drip_interval: float = 1.0,
        huge_answer_bytes: int | None = None,
        nonfinite_logprobs: float | None = None,
        serve_tokenizer_info: bool = True,
    ) -> None:
        if key_scope not in ("all", "v1"):
            raise ValueError(f"key_scope is 'all' or 'v1', not {key_scope!r}")
        self.answer = answer
        self.api_key = api_key
        self.key_scope = key_scope
        self.model_names = tuple(model_names)
        self.stall_after = stall_after
        self.stall_seconds = stall_seconds
        self.fail_after = fail_after
        self.fail_with = fail_with
        self.max_model_len = max_model_len
        self.cue = cue
        # hostile variants (the module docstring)
        self.redirect_to = redirect_to
        self.redirect_status = redirect_status
        self.echo_authorization = echo_authorization
        self.echo_status = echo_status
        # misbehaviours (the module docstring)
        self.drip_models = drip_models
        self.drip_after = drip_after
        self.drip_count = drip_count
        self.drip_interval = drip_interval
        self.huge_answer_bytes = huge_answer_bytes
        self.nonfinite_logprobs = nonfinite_logprobs
        self.serve_tokenizer_info = serve_tokenizer_info
        self._drip_seen = 0  # completion requests counted for drip_after
        self._address = (host, port)
        self._lock = threading.Lock()
        self._log: list[RequestRecord] = []
        self._completions = 0  # completion requests that passed the key check
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._handler_threads: set[threading.Thread] = set()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle

    def start(self) -> OpenAIServer:
        if self._httpd is not None:
            raise RuntimeError("the server is already started")
        httpd = _Server(self._address, _handler_class(self))
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"openai-server-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop accepting, wake stalled requests, close every connection (idle keep-alive
        ones included), and wait (up to `timeout`) for the handler threads to end."""
        httpd = self._httpd
        if httpd is None:
            return
        with self._lock:
            self._stopping.set()
            connections = list(self._connections)
        httpd.shutdown()
        for sock in connections:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout)
        deadline = time.monotonic() + timeout
        with self._lock:
            threads = list(self._handler_threads)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._httpd = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ---- addresses

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self._address[0]}:{self.port}"

    @property
    def completions_url(self) -> str:
        return f"{self.url}/v1/completions"

    @property
    def chat_url(self) -> str:
        return f"{self.url}/v1/chat/completions"

    @property
    def models_url(self) -> str:
        return f"{self.url}/v1/models"

    # ---- the request log

    @property
    def requests(self) -> list[RequestRecord]:
        """Every request so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._log)

    @property
    def counts(self) -> Counter[str]:
        """Requests so far per path, e.g. counts["/v1/completions"]."""
        with self._lock:
            return Counter(record.path for record in self._log)

    @property
    def authorizations(self) -> list[str | None]:
        """The Authorization header of every request so far (None when absent)."""
        with self._lock:
            return [record.authorization for record in self._log]

    @property
    def handlers_running(self) -> int:
        """Handler threads still running (after `stop()`: those it could not end in time)."""
        with self._lock:
            return sum(thread.is_alive() for thread in self._handler_threads)

    def payloads(self, path: str) -> list[Any]:
        """The JSON payloads received on `path`, in arrival order."""
        with self._lock:
            return [record.payload for record in self._log if record.path == path]

    def reset(self) -> None:
        """Forget the log and the completion count (stall_after / fail_after count anew)."""
        with self._lock:
            self._log.clear()
            self._completions = 0

    # ---- used by the handler

    def _record(self, record: RequestRecord) -> None:
        with self._lock:
            self._log.append(record)

    def _drips(self, path: str) -> bool:
        """Whether this answer is dripped (`drip_models`, `drip_after` / `drip_count`)."""
        if path == "/v1/models":
            return self.drip_models
        if path not in COMPLETION_PATHS or self.drip_after is None:
            return False
        with self._lock:
            seen = self._drip_seen
            self._drip_seen += 1
        if seen < self.drip_after:
            return False
        return self.drip_count is None or seen < self.drip_after + self.drip_count

    def _register(self, sock: socket.socket, thread: threading.Thread) -> bool:
        with self._lock:
            if self._stopping.is_set():
                return False
            self._connections.add(sock)
            self._handler_threads.add(thread)
            return True

    def _unregister(self, sock: socket.socket, thread: threading.Thread) -> None:
        with self._lock:
            self._connections.discard(sock)
            self._handler_threads.discard(thread)

    def _next_completion(self) -> int:
        with self._lock:
            seen = self._completions
            self._completions += 1
            return seen

    def _authorized(self, path: str, header: str | None) -> bool:
        if self.api_key is None:
            return True
        if self.key_scope == "v1" and not path.startswith("/v1"):
            return True
        expected = f"Bearer {self.api_key}".encode()
        return header is not None and hmac.compare_digest(header.encode(), expected)

    def _check_model(self, payload: dict[str, Any]) -> str:
        name = payload.get("model")
        if name is None:
            return self.model_names[0]
        if name not in self.model_names:
            raise ApiError(404, f"The model `{name}` does not exist.", "NotFoundError", 404)
        return str(name)

    # ---- endpoints

    def models(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {
                    "id": name,
                    "object": "model",
                    "created": 0,
                    "owned_by": "benchpress-test",
                    "root": name,
                    "max_model_len": self.max_model_len,
                }
                for name in self.model_names
            ],
        }

    def tokenizer_info(self) -> dict[str, Any]:
        return {
            "tokenizer_class": "ByteLevelTestTokenizer",
            "eos_token": EOS_TOKEN,
            "bos_token": BOS_TOKEN,
            "pad_token": EOS_TOKEN,
            "unk_token": None,
            "add_bos_token": False,
            "add_eos_token": False,
            "model_max_length": self.max_model_len,
            "chat_template": CHAT_TEMPLATE,
            "vocab_size": VOCAB_SIZE,
        }

    def tokenize(self, payload: dict[str, Any]) -> dict[str, Any]:
        if payload.get("model") is not None:
            self._check_model(payload)
        if "messages" in payload:
            text = render_chat(_messages(payload), bool(payload.get("add_generation_prompt", True)))
            add_special = bool(payload.get("add_special_tokens", False))
        elif isinstance(payload.get("prompt"), str):
            text = payload["prompt"]
            add_special = bool(payload.get("add_special_tokens", True))
        else:
            raise ApiError(400, "`prompt` (a string) or `messages` is required")
        tokens = encode(text, add_special)
        return {
            "count": len(tokens),
            "max_model_len": self.max_model_len,
            "tokens": tokens,
            "token_strs": [token_string(t) for t in tokens]
            if payload.get("return_token_strs")
            else None,
        }

    def detokenize(self, payload: dict[str, Any]) -> dict[str, Any]:
        if payload.get("model") is not None:
            self._check_model(payload)
        tokens = payload.get("tokens")
        if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
            raise ApiError(400, "`tokens` (a list of token ids) is required")
        try:
            return {"prompt": decode(tokens)}
        except ValueError as error:
            raise ApiError(400, str(error)) from error

    def completions(self, payload: dict[str, Any]) -> dict[str, Any]:
        model = self._check_model(payload)
        if payload.get("stream"):
            raise ApiError(400, "streaming is not supported by this test server")
        prompts = _prompts(payload.get("prompt"))
        echo = bool(payload.get("echo", False))
        logprobs = payload.get("logprobs")
        choices = []
        prompt_total = completion_total = 0
        for index, prompt_ids in enumerate(prompts):
            max_tokens = self._max_tokens(payload, len(prompt_ids))
            prompt_text = decode(prompt_ids)
            text, gen_ids, finish = self._generate(prompt_text, max_tokens, payload.get("stop"))
            choice: dict[str, Any] = {
                "index": index,
                "text": prompt_text + text if echo else text,
                "logprobs": None,
                "finish_reason": finish,
                "stop_reason": None,
            }
            if logprobs is not None:
                choice["logprobs"] = self._logprobs(prompt_ids, gen_ids, echo, int(logprobs))
                if self.nonfinite_logprobs is not None:
                    _make_nonfinite(choice["logprobs"], self.nonfinite_logprobs)
            choices.append(choice)
            prompt_total += len(prompt_ids)
            completion_total += len(gen_ids)
        return {
            "id": f"cmpl-{uuid.uuid4().hex}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": model,
            "choices": choices,
            "usage": _usage(prompt_total, completion_total),
        }

    def chat_completions(self, payload: dict[str, Any]) -> dict[str, Any]:
        model = self._check_model(payload)
        if payload.get("stream"):
            raise ApiError(400, "streaming is not supported by this test server")
        messages = _messages(payload)
        users = [m for m in messages if m.get("role") == "user"]
        if not users:
            raise ApiError(400, "`messages` has no user message")
        prompt_ids = encode(render_chat(messages))
        if payload.get("max_completion_tokens") is not None:
            payload = {**payload, "max_tokens": payload["max_completion_tokens"]}
        max_tokens = self._max_tokens(payload, len(prompt_ids))
        question = message_text(users[-1].get("content"))
        text, gen_ids, finish = self._generate(question, max_tokens, payload.get("stop"))
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "logprobs": None,
                    "finish_reason": finish,
                }
            ],
            "usage": _usage(len(prompt_ids), len(gen_ids)),
        }

    def _max_tokens(self, payload: dict[str, Any], prompt_len: int) -> int:
        requested = payload.get("max_tokens")
        room = self.max_model_len - prompt_len
        if requested is None:
            requested = max(room, 0)
        if not isinstance(requested, int) or requested < 0:
            raise ApiError(400, f"max_tokens must be a non-negative integer, got {requested!r}")
        if prompt_len + requested > self.max_model_len:
            raise ApiError(
                400,
                f"This model's maximum context length is {self.max_model_len} tokens. However,"
                f" you requested {prompt_len + requested} tokens ({prompt_len} in the messages,"
                f" {requested} in the completion).",
            )
        return requested

    def _generate(self, prompt: str, max_tokens: int, stop: Any) -> tuple[str, list[int], str]:
        """(text, generated token ids, finish_reason): `answer(prompt)` cut at the first stop
        string and at max_tokens; a generation that ends by itself ends with the eos token."""
        text = self.answer(prompt)
        stops = [stop] if isinstance(stop, str) else list(stop or [])
        cuts = [text.find(s) for s in stops if s and s in text]
        if cuts:
            text = text[: min(cuts)]
        ids = encode(text)
        if len(ids) >= max_tokens:
            finish = "length" if len(ids) > max_tokens or not cuts else "stop"
            ids = ids[:max_tokens]
            return decode(ids), ids, finish
        return text, [*ids, EOS_ID], "stop"

    def _logprobs(
        self, prompt_ids: list[int], gen_ids: list[int], echo: bool, top: int
    ) -> dict[str, Any]:
        ids = [*prompt_ids, *gen_ids]
        scored = score_tokens(ids, self.answer, self.cue)
        first = 0 if echo else len(prompt_ids)
        tokens, token_logprobs, top_logprobs, offsets = [], [], [], []
        offset = 0
        for i in range(len(ids)):
            piece = token_string(ids[i])
            if i >= first:
                tokens.append(piece)
                offsets.append(offset)
                if i == 0:
                    token_logprobs.append(None)
                    top_logprobs.append(None)
                else:
                    logprob, likely, likely_logprob = scored[i - 1]
                    token_logprobs.append(logprob)
                    # the `top` most likely tokens (the model names one) and the actual one
                    best = {token_string(likely): likely_logprob} if top > 0 else {}
                    best.setdefault(piece, logprob)
                    top_logprobs.append(best)
            offset += len(decode([ids[i]]))
        return {
            "tokens": tokens,
            "token_logprobs": token_logprobs,
            "top_logprobs": top_logprobs,
            "text_offset": offsets,
        }


def _prompts(prompt: Any) -> list[list[int]]:
    """The prompts of a completions request as token ids: a string, a list of strings, a list
    of token ids, or a list of lists of token ids."""
    if isinstance(prompt, str):
        return [encode(prompt)]
    if isinstance(prompt, list) and prompt:
        if all(isinstance(p, int) for p in prompt):
            return [_checked_ids(prompt)]
        if all(isinstance(p, str) for p in prompt):
            return [encode(p) for p in prompt]
        if all(isinstance(p, list) and p and all(isinstance(t, int) for t in p) for p in prompt):
            return [_checked_ids(p) for p in prompt]
    raise ApiError(
        400,
        "`prompt` must be a string, a list of strings, a list of token ids or a list of lists"
        " of token ids (non-empty)",
    )


def _checked_ids(ids: list[int]) -> list[int]:
    bad = [t for t in ids if not 0 <= t < VOCAB_SIZE]
    if bad:
        raise ApiError(400, f"token id {bad[0]} is out of vocabulary (0..{VOCAB_SIZE - 1})")
    return ids


def _messages(payload: dict[str, Any]) -> list[dict[str, Any]]:
    messages = payload.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise ApiError(400, "`messages` (a list of {role, content}) is required")
    return messages


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def _handler_class(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    routes: dict[tuple[str, str], Callable[[dict[str, Any]], dict[str, Any]]] = {
        ("POST", "/v1/completions"): server.completions,
        ("POST", "/v1/chat/completions"): server.chat_completions,
        ("POST", "/tokenize"): server.tokenize,
        ("POST", "/detokenize"): server.detokenize,
        ("GET", "/v1/models"): lambda _: server.models(),
        ("GET", "/tokenizer_info"): lambda _: server.tokenizer_info(),
        ("GET", "/health"): lambda _: {},
    }
    if not server.serve_tokenizer_info:  # llama.cpp's server: no /tokenizer_info (404)
        del routes[("GET", "/tokenizer_info")]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: lm-eval's clients reuse connections
        server_version = "benchpress-openai-test/1"
        timeout = 120  # an idle keep-alive connection is closed after this many seconds

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def setup(self) -> None:
            super().setup()
            # answers go out at once (no Nagle delay waiting for the client's delayed ACK)
            with contextlib.suppress(OSError):
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if not server._register(self.connection, threading.current_thread()):
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)

        def finish(self) -> None:
            try:
                super().finish()
            finally:
                server._unregister(self.connection, threading.current_thread())

        def do_GET(self) -> None:  # noqa: N802 (http.server API)
            self._serve("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._serve("POST")

        def _serve(self, method: str) -> None:
            path = urlsplit(self.path).path.rstrip("/") or "/"
            record = RequestRecord(method, path, self.headers.get("Authorization"))
            server._record(record)
            if server.redirect_to is not None:
                self._redirect(record)
                return
            try:
                body = self._read_body()
                if body:
                    try:
                        record.payload = json.loads(body)
                    except ValueError as error:
                        raise ApiError(400, f"the body is not JSON: {error}") from error
                route = routes.get((method, path))
                if route is None:
                    known = {p for _, p in routes}
                    if path in known:
                        raise ApiError(405, f"{method} is not allowed on {path}")
                    raise ApiError(404, f"no route {path}", "NotFoundError", 404)
                if not server._authorized(path, record.authorization):
                    # never echo what was received: the message names no key
                    raise ApiError(
                        401,
                        "Incorrect API key provided. Send `Authorization: Bearer <key>`.",
                        "invalid_request_error",
                        "invalid_api_key",
                    )
                payload = record.payload if record.payload is not None else {}
                if not isinstance(payload, dict):
                    raise ApiError(400, "the body must be a JSON object")
                if path in COMPLETION_PATHS and not self._fault(record):
                    return
                if path in COMPLETION_PATHS and server.echo_authorization:
                    raise ApiError(
                        server.echo_status,
                        f"upstream refused the request (headers: Authorization: "
                        f"{record.authorization})",
                        "InternalServerError",
                        server.echo_status,
                    )
                if path in COMPLETION_PATHS and server.huge_answer_bytes is not None:
                    self._send_huge(record, server.huge_answer_bytes)
                    return
                answer = route(payload)
            except ApiError as error:
                self._send(record, error.status, _error_body(error))
                return
            except Exception as error:  # a bug here or in a test's answer(): a 500 to see
                failure = ApiError(500, f"{type(error).__name__}: {error}", "InternalServerError")
                self._send(record, 500, _error_body(failure))
                return
            if server._drips(path):
                self._drip(record, 200, answer)
                return
            self._send(record, 200, answer)

        def _fault(self, record: RequestRecord) -> bool:
            """Apply stall_after / fail_after; False when the request must get no answer."""
            seen = server._next_completion()
            if server.stall_after is not None and seen >= server.stall_after:
                server._stopping.wait(server.stall_seconds)
                self.close_connection = True
                return False
            if server.fail_after is not None and seen >= server.fail_after:
                status = server.fail_with
                raise ApiError(
                    status,
                    f"the test server fails every completion request after the first "
                    f"{server.fail_after} (HTTP {status})",
                    "InternalServerError" if status >= 500 else "invalid_request_error",
                    status,
                )
            return True

        def _read_body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        return b"".join(chunks)
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _send(self, record: RequestRecord, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode("utf-8")
            record.status = status
            try:
                self.send_response(status, HTTPStatus(status).phrase)
            except ValueError:
                self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status == 401:
                self.send_header("WWW-Authenticate", "Bearer")
            self.end_headers()
            self.wfile.write(data)

        # ---- hostile variants (the module docstring)

        def _redirect(self, record: RequestRecord) -> None:
            """Answer `redirect_status` towards `redirect_to` + the request's path."""
            self._read_body()
            record.status = server.redirect_status
            self.send_response(server.redirect_status)
            self.send_header("Location", f"{server.redirect_to}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()

        # ---- misbehaviours (the module docstring)

        def _drip(self, record: RequestRecord, status: int, body: dict[str, Any]) -> None:
            """The whole answer, its status line first, one byte every `drip_interval`
            seconds, until it is sent, the client goes away or the server stops."""
            data = json.dumps(body).encode("utf-8")
            head = (
                f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
            ).encode("ascii")
            self.close_connection = True
            for byte in head + data:
                try:
                    self.wfile.write(bytes((byte,)))
                except OSError:
                    return
                if server._stopping.wait(server.drip_interval):
                    return
            record.status = status

        def _send_huge(self, record: RequestRecord, size: int) -> None:
            """A 200 answer of `size` bytes, one choice with that long a `text` and no
            `logprobs`, written a MiB at a time (the server never holds it whole)."""
            head = b'{"id":"cmpl-huge","object":"text_completion","created":0,"choices":'
            head += b'[{"index":0,"text":"'
            tail = b'","finish_reason":"length"}]}'
            fill = max(size - len(head) - len(tail), 0)
            record.status = 200
            self.close_connection = True
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(head) + fill + len(tail)))
            self.end_headers()
            chunk = b"a" * (1 << 20)
            try:
                self.wfile.write(head)
                while fill and not server._stopping.is_set():
                    self.wfile.write(chunk[: min(fill, len(chunk))])
                    fill -= min(fill, len(chunk))
                self.wfile.write(tail)
            except OSError:  # the client went away (its memory cap ended it)
                return

    return Handler


def _make_nonfinite(logprobs: dict[str, Any], value: float) -> None:
    """Every log-prob of an answer's `logprobs` made `value` (the misbehaviour
    `nonfinite_logprobs`); the first token's None stays None."""
    logprobs["token_logprobs"] = [None if v is None else value for v in logprobs["token_logprobs"]]
    logprobs["top_logprobs"] = [
        None if top is None else dict.fromkeys(top, value) for top in logprobs["top_logprobs"]
    ]


def _error_body(error: ApiError) -> dict[str, Any]:
    return {
        "error": {
            "message": str(error),
            "type": error.kind,
            "param": None,
            "code": error.code if error.code is not None else error.status,
        }
    }
