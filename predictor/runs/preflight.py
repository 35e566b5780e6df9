"""Before the first task: is the endpoint up, and does it take the key? One request to the
server's model list (`GET <server>/v1/models`, which vLLM, llama.cpp, SGLang and OpenAI
all answer), so a wrong URL or key fails in a second with one line naming the setting,
instead of after lm-eval has loaded its tasks and retried every request.

No redirect is followed: a 3xx answer is an error naming the URL it points to (following it
would send the key to another host, or from https to http). Messages never show the key.

The check is held to a total deadline, the request timeout (`--timeout`, at most
`PREFLIGHT_SECONDS`), not only per read: a server that drips its answer a byte at a time
fails it within that many seconds (`predictor.runs.isolation.RequestDeadline`).

For lm-eval's `local-completions` with the server's tokenizer (`tokenizer_backend=remote`,
benchpress's default), one more request: `GET <server>/tokenizer_info`, which llama.cpp's
server does not answer (`check_tokenizer`: what to do instead). The tasks' datasets are
checked by `predictor.runs.dataset_preflight`, with `http_get` here."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

from predictor.harnesses.endpoint import Endpoint
from predictor.harnesses.redact import redact
from predictor.runs.isolation import HTTP_ERRORS, RequestDeadline
from predictor.runs.settings import KEY_ENV

ROUTES = ("/v1/completions", "/v1/chat/completions", "/completions", "/chat/completions")
PREFLIGHT_SECONDS = 30.0  # the longest the check may take, whatever --timeout says


class EndpointError(RuntimeError):
    """The endpoint is down, unreachable or refuses the key; the message says which setting."""


def models_url(base_url: str) -> str:
    """`http://h:8000/v1/completions` -> `http://h:8000/v1/models`."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    for route in ROUTES:
        if path.endswith(route):
            path = path[: -len(route)] + ("/v1" if route.startswith("/v1") else "")
            break
    if not path.endswith("/v1"):
        path += "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path + "/models", "", ""))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Follow no redirect: the 3xx answer comes back as an `HTTPError`."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def check_endpoint(endpoint: Endpoint) -> None:
    """Raise `EndpointError` unless the endpoint answers its model list with the key."""
    if not endpoint.is_api or not endpoint.base_url:
        return
    try:
        _check(endpoint)
    except EndpointError as error:  # a server's or a library's words may quote the key
        raise EndpointError(redact(str(error), endpoint.api_key)) from None


def _check(endpoint: Endpoint) -> None:
    url = endpoint.base_url
    if urlsplit(url).scheme not in ("http", "https"):
        raise EndpointError(
            f"model endpoint {url!r} ({endpoint.base_url_origin}) is not an http(s) URL"
        )
    asked = models_url(url)
    request = urllib.request.Request(asked, method="GET")
    if endpoint.api_key:
        request.add_header("Authorization", f"Bearer {endpoint.api_key}")
    seconds = min(endpoint.timeout, PREFLIGHT_SECONDS)
    deadline = RequestDeadline(seconds)  # in all, not per read
    opener = urllib.request.build_opener(_NoRedirect, *deadline.handlers())
    try:
        with deadline, opener.open(request, timeout=seconds) as response:
            response.read(1 << 16)
    except urllib.error.HTTPError as error:
        if 300 <= error.code < 400:
            target = error.headers.get("Location") if error.headers else None
            where = f" to {urljoin(asked, target)}" if target else ""
            raise EndpointError(
                f"model endpoint {url} ({endpoint.base_url_origin}) answered {asked} with a "
                f"redirect (HTTP {error.code}){where}: benchpress follows no redirect (it "
                "would send the key elsewhere); give the endpoint's own URL"
            ) from None
        if error.code in (401, 403):
            hint = f"check {KEY_ENV}" if endpoint.api_key else f"set {KEY_ENV}"
            raise EndpointError(
                f"model endpoint {url} refused the API key (HTTP {error.code}); {hint}"
            ) from None
        if error.code >= 500:
            raise EndpointError(
                f"model endpoint {url} ({endpoint.base_url_origin}) answered HTTP "
                f"{error.code}: the server is not ready"
            ) from None
        # 404 and the like: a server without a model list; the first task will tell
    except (urllib.error.URLError, *HTTP_ERRORS) as error:
        if deadline.expired:
            raise _too_slow(endpoint, seconds) from None
        reason = getattr(error, "reason", error)
        raise EndpointError(
            f"cannot reach the model endpoint {url} ({endpoint.base_url_origin}): {reason}"
        ) from None
    if deadline.expired:  # the answer was cut short
        raise _too_slow(endpoint, seconds)


def _too_slow(endpoint: Endpoint, seconds: float) -> EndpointError:
    return EndpointError(
        f"model endpoint {endpoint.base_url} ({endpoint.base_url_origin}) did not answer its "
        f"model list within {seconds:g} s (--timeout, BENCHPRESS_MODEL_TIMEOUT)"
    )


# --------------------------------------------------------------- one GET, for the other checks
@dataclass(frozen=True)
class HttpAnswer:
    status: int
    body: bytes


class Unreachable(OSError):
    """No HTTP answer: the host is unreachable, refused the connection, or too slow."""


def http_get(url: str, headers: Mapping[str, str], seconds: float) -> HttpAnswer:
    """One GET within `seconds` in all, no redirect followed (a 3xx is its answer): the
    status and up to 64 KiB of the body; `Unreachable` when no answer came."""
    request = urllib.request.Request(url, method="GET", headers=dict(headers))
    deadline = RequestDeadline(seconds)
    opener = urllib.request.build_opener(_NoRedirect, *deadline.handlers())
    try:
        with deadline, opener.open(request, timeout=seconds) as response:
            body = response.read(1 << 16)
            status = response.status
    except urllib.error.HTTPError as error:
        return HttpAnswer(error.code, b"")
    except (urllib.error.URLError, *HTTP_ERRORS) as error:
        # a socket timeout can come before the deadline's own timer on a loaded machine
        timed_out = isinstance(error, TimeoutError) or isinstance(
            getattr(error, "reason", None), TimeoutError
        )
        if deadline.expired or timed_out:
            raise Unreachable(f"no answer within {seconds:.3g} s") from None
        raise Unreachable(str(getattr(error, "reason", error))) from None
    if deadline.expired:
        raise Unreachable(f"no answer within {seconds:.3g} s")
    return HttpAnswer(status, body)


# ------------------------------------------------------------------ the server's tokenizer
def server_root(base_url: str) -> str:
    """`http://h:8000/v1/completions` -> `http://h:8000`, where lm-eval's remote tokenizer
    asks (`/tokenizer_info`, `/tokenize`)."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    for route in ROUTES:
        if path.endswith(route):
            path = path[: -len(route)]
            break
    return urlunsplit((parts.scheme, parts.netloc, path.rstrip("/"), "", ""))


def needs_remote_tokenizer(endpoint: Endpoint) -> bool:
    """lm-eval will tokenize on the server: `tokenizer_backend=remote` (what benchpress sets
    for `local-completions`) and no tokenizer of its own given."""
    args = endpoint.model_args
    return (
        endpoint.is_api
        and bool(endpoint.base_url)
        and str(args.get("tokenizer_backend", "")).lower() == "remote"
        and not args.get("tokenizer")
    )


def check_tokenizer(endpoint: Endpoint) -> None:
    """`EndpointError` unless the server answers `GET /tokenizer_info`, which lm-eval's
    remote tokenizer reads before any request (vLLM and SGLang serve it; llama.cpp's server
    does not, and every task would fail)."""
    if not needs_remote_tokenizer(endpoint):
        return
    url = f"{server_root(str(endpoint.base_url))}/tokenizer_info"
    headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
    seconds = min(endpoint.timeout, PREFLIGHT_SECONDS)
    try:
        answer = http_get(url, headers, seconds)
    except Unreachable as error:
        message = f"cannot reach the model endpoint's tokenizer {url}: {error}"
        raise EndpointError(redact(message, endpoint.api_key)) from None
    if answer.status == 200:
        return
    raise EndpointError(  # the URL may hold the key (a gateway taking it in the path)
        redact(
            f"the model endpoint has no tokenizer at {url} (HTTP {answer.status}; llama.cpp's "
            "server has none), which lm-eval needs to score multiple-choice tasks on it "
            "(tokenizer_backend=remote): pass --tokenizer HF_NAME (the model's tokenizer on the "
            "Hugging Face Hub or a local folder), or run generation tasks on the chat endpoint "
            "(--model-type local-chat-completions with base_url=.../v1/chat/completions)",
            endpoint.api_key,
        )
    )
