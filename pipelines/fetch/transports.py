"""HTTP fetching with timeouts, retries, conditional GET and a size cap; plus offline replay.

`live` GETs the real URL, `mirror` rewrites `https://host/path?q` to `MIRROR/host/path?q`, and
`replay` reads the same `<host>/<path>` layout from the payloads bundled in the repo. Everything
above this module sees one `FetchedPayload` type whatever the transport.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from urllib.parse import quote, urlsplit

import requests

MODES = ("live", "mirror", "replay")
DEFAULT_REPLAY_ROOT = Path(__file__).resolve().parent.parent / "replay"
RECORDED_GLOB = "_sources/*.recorded.json"  # per source: {relpath: {recorded_at, sha256}}
USER_AGENT = "benchpress-llm/0.1 (+https://github.com/benchpress-llm)"


class FetchError(RuntimeError):
    """A payload could not be fetched; names the source, URL and reason."""

    def __init__(self, source: str, url: str, reason: str):
        super().__init__(f"{source}: fetching {url} failed: {reason}")
        self.source, self.url, self.reason = source, url, reason


@dataclass(frozen=True)
class Validators:
    """What the last stored copy of a URL looked like, for conditional GET."""

    etag: str | None = None
    last_modified: str | None = None
    sha256: str | None = None


@dataclass(frozen=True)
class FetchedPayload:
    source: str
    url: str
    transport: str
    status: int
    fetched_at: datetime
    content: bytes | None  # None when the server said 304 Not Modified
    content_type: str | None = None
    etag: str | None = None
    last_modified: str | None = None

    @property
    def not_modified(self) -> bool:
        return self.content is None

    @property
    def sha256(self) -> str | None:
        return None if self.content is None else hashlib.sha256(self.content).hexdigest()


def mirror_url(url: str, base: str) -> str:
    """`https://example.org/a/b.json?x=1` -> `BASE/example.org/a/b.json?x=1`."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        raise ValueError(f"not an absolute URL: {url!r}")
    tail = f"{parts.netloc}{parts.path}"
    if parts.query:
        tail += f"?{parts.query}"
    return f"{base.rstrip('/')}/{tail}"


def replay_relpath(url: str) -> str:
    """The file a URL is recorded under in the replay root (`<host>/<path>`, query quoted)."""
    parts = urlsplit(url)
    path = parts.path.lstrip("/")
    if not path or path.endswith("/"):
        path += "index"
    rel = f"{parts.netloc}/{path}"
    if parts.query:
        rel += "__" + quote(parts.query, safe="")
    if ".." in Path(rel).parts:
        raise ValueError(f"refusing a URL that escapes the replay root: {url!r}")
    return rel


def _retry_after_seconds(value: str | None, cap: float) -> float | None:
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = (when - datetime.now(UTC)).total_seconds()
    return max(0.0, min(seconds, cap))


class Fetcher:
    """Fetch URLs through one transport; retries 5xx and connection errors with backoff."""

    def __init__(
        self,
        mode: str = "replay",
        mirror: str | None = None,
        replay_root: Path | str | None = None,
        timeout: tuple[float, float] = (5.0, 30.0),
        retries: int = 3,
        backoff: float = 0.5,
        max_retry_wait: float = 30.0,
        session: requests.Session | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        sleep: Callable[[float], None] = time.sleep,
    ):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if mode == "mirror" and not mirror:
            raise ValueError("mode 'mirror' needs a mirror base URL (BENCHPRESS_HTTP_MIRROR)")
        self.mode = mode
        self.mirror = mirror
        self.replay_root = Path(replay_root) if replay_root else DEFAULT_REPLAY_ROOT
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_retry_wait = max_retry_wait
        self.session = session or requests.Session()
        self.session.headers.setdefault("User-Agent", USER_AGENT)
        self.clock = clock
        self.sleep = sleep
        self._recorded: dict[str, dict[str, str]] | None = None

    def fetch(
        self,
        source: str,
        url: str,
        max_bytes: int,
        previous: Validators | None = None,
    ) -> FetchedPayload:
        if self.mode == "replay":
            return self._replay(source, url, max_bytes)
        target = url if self.mode == "live" else mirror_url(url, self.mirror or "")
        return self._http(source, url, target, max_bytes, previous or Validators())

    # -- replay -----------------------------------------------------------------------------
    def _recorded_index(self) -> dict[str, dict[str, str]]:
        if self._recorded is None:
            merged: dict[str, dict[str, str]] = {}
            for index in sorted(self.replay_root.glob(RECORDED_GLOB)):
                merged.update(json.loads(index.read_text("utf-8")))
            self._recorded = merged
        return self._recorded

    def _replay(self, source: str, url: str, max_bytes: int) -> FetchedPayload:
        rel = replay_relpath(url)
        path = self.replay_root / rel
        if not path.is_file():
            raise FetchError(source, url, f"no recorded payload at {rel} in the replay root")
        size = path.stat().st_size
        if size > max_bytes:
            raise FetchError(source, url, f"payload of {size} bytes exceeds the cap {max_bytes}")
        content = path.read_bytes()
        facts = self._recorded_index().get(rel, {})
        if "sha256" in facts and hashlib.sha256(content).hexdigest() != facts["sha256"]:
            raise FetchError(source, url, f"recorded payload {rel} does not match its sha256")
        recorded = facts.get("recorded_at")
        fetched_at = datetime.fromisoformat(recorded) if recorded else self.clock()
        return FetchedPayload(source, url, "replay", 200, fetched_at, content)

    # -- http -------------------------------------------------------------------------------
    def _http(
        self, source: str, url: str, target: str, max_bytes: int, previous: Validators
    ) -> FetchedPayload:
        headers = {}
        if previous.etag:
            headers["If-None-Match"] = previous.etag
        if previous.last_modified:
            headers["If-Modified-Since"] = previous.last_modified
        last_reason = "no attempt made"
        for attempt in range(self.retries + 1):
            wait = self.backoff * (2**attempt)
            try:
                response = self.session.get(
                    target, headers=headers, timeout=self.timeout, stream=True
                )
            except requests.Timeout:
                last_reason = f"timed out after {self.timeout[1]:g}s"
            except requests.ConnectionError as exc:
                last_reason = f"connection error ({type(exc).__name__})"
            else:
                with response:
                    if response.status_code >= 500 or response.status_code == 429:
                        last_reason = f"HTTP {response.status_code}"
                        hinted = _retry_after_seconds(
                            response.headers.get("Retry-After"), self.max_retry_wait
                        )
                        wait = hinted if hinted is not None else wait
                    else:
                        return self._accept(source, url, response, max_bytes)
            if attempt < self.retries:
                self.sleep(wait)
        raise FetchError(source, url, f"{last_reason} after {self.retries + 1} attempts")

    def _accept(
        self, source: str, url: str, response: requests.Response, max_bytes: int
    ) -> FetchedPayload:
        fetched_at = self.clock()
        etag = response.headers.get("ETag")
        last_modified = response.headers.get("Last-Modified")
        content_type = response.headers.get("Content-Type")
        if response.status_code == 304:
            return FetchedPayload(
                source, url, self.mode, 304, fetched_at, None, content_type, etag, last_modified
            )
        if response.status_code != 200:
            raise FetchError(source, url, f"HTTP {response.status_code}")
        declared = response.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > max_bytes:
            raise FetchError(source, url, f"declared size {declared} exceeds the cap {max_bytes}")
        chunks: list[bytes] = []
        total = 0
        try:
            for chunk in response.iter_content(chunk_size=65536):
                total += len(chunk)
                if total > max_bytes:
                    raise FetchError(source, url, f"body exceeds the cap of {max_bytes} bytes")
                chunks.append(chunk)
        except requests.RequestException as exc:
            raise FetchError(source, url, f"body truncated ({type(exc).__name__})") from None
        content = b"".join(chunks)
        if declared and declared.isdigit() and int(declared) != len(content):
            raise FetchError(source, url, f"body truncated: {len(content)} of {declared} bytes")
        if not content:
            raise FetchError(source, url, "empty body")
        path = urlsplit(url).path.lower()
        is_html_url = path.endswith((".html", ".htm"))
        if content_type and content_type.lower().startswith("text/html") and not is_html_url:
            raise FetchError(source, url, "server returned an HTML page with status 200")
        return FetchedPayload(
            source, url, self.mode, 200, fetched_at, content, content_type, etag, last_modified
        )
