"""Before the first task: is the endpoint up, and does it take the key? One request to the
server's model list (`GET <server>/v1/models`, which vLLM, llama.cpp, SGLang and OpenAI
all answer), so a wrong URL or key fails in a second with one line naming the setting,
instead of after lm-eval has loaded its tasks and retried every request."""

from __future__ import annotations

import urllib.error
import urllib.request
from urllib.parse import urlsplit, urlunsplit

from predictor.runs.settings import KEY_ENV, Endpoint

ROUTES = ("/v1/completions", "/v1/chat/completions", "/completions", "/chat/completions")


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


def check_endpoint(endpoint: Endpoint) -> None:
    """Raise `EndpointError` unless the endpoint answers its model list with the key."""
    if not endpoint.is_api or not endpoint.base_url:
        return
    url = endpoint.base_url
    if urlsplit(url).scheme not in ("http", "https"):
        raise EndpointError(
            f"model endpoint {url!r} ({endpoint.base_url_origin}) is not an http(s) URL"
        )
    request = urllib.request.Request(models_url(url), method="GET")
    if endpoint.api_key:
        request.add_header("Authorization", f"Bearer {endpoint.api_key}")
    try:
        with urllib.request.urlopen(request, timeout=min(endpoint.timeout, 30.0)) as response:
            response.read(1 << 16)
    except urllib.error.HTTPError as error:
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
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise EndpointError(
            f"cannot reach the model endpoint {url} ({endpoint.base_url_origin}): {reason}"
        ) from None
