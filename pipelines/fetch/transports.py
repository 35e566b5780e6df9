"""HTTP fetching with timeouts, retries, conditional GET and a size cap; plus offline replay.

`live` GETs the real URL, `mirror` rewrites `https://host/path?q` to `MIRROR/host/path?q`, and
`replay` reads the same `<host>/<path>` layout from the payloads bundled in the repo. Everything
above this module sees one `FetchedPayload` type whatever the transport.

Bodies are read raw and decoded here (gzip, deflate), so the bytes on the wire can be checked
against `Content-Length` and both the wire size and the decoded size against the cap (a small
compressed body can inflate without bound). A per-URL deadline (`BENCHPRESS_FETCH_DEADLINE`,
retries and waits included) stops a server that trickles bytes: the read timeout alone restarts
with every chunk that arrives. A caller may pass an earlier `Deadline` (the source's or the
run's budget, `pipelines.fetch.budget`); the download then stops at whichever comes first.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from urllib.parse import quote, urlsplit

import requests
import urllib3

MODES = ("live", "mirror", "replay")
DEFAULT_REPLAY_ROOT = Path(__file__).resolve().parent.parent / "replay"
RECORDED_GLOB = "_sources/*.recorded.json"  # per source: {relpath: {recorded_at, sha256}}
USER_AGENT = "benchpress-llm/0.1 (+https://github.com/benchpress-llm)"
DEADLINE_ENV = "BENCHPRESS_FETCH_DEADLINE"
DEFAULT_DEADLINE = 120.0  # seconds for one URL, retries and waits included
DOWNLOAD = "download"  # the scope of the per-URL deadline
ACCEPT_ENCODING = "gzip, deflate"  # exactly what _BodyDecoder undoes
READ_CHUNK = 65536


@dataclass(frozen=True)
class Deadline:
    """When fetching must stop (`at`, on the `time.monotonic()` clock) and the setting that
    says so: `seconds` of `setting` for `scope` ("download" for one URL, "source", "run")."""

    at: float
    seconds: float
    scope: str
    setting: str

    def text(self, received: int | None = None) -> str:
        got = f" after {received} bytes" if received is not None else ""
        return f"{self.scope} deadline of {self.seconds:g}s exceeded{got} ({self.setting})"


class FetchError(RuntimeError):
    """A payload could not be fetched; names the source, URL and reason. `deadline`: the
    deadline that stopped it, when one did."""

    def __init__(self, source: str, url: str, reason: str, deadline: Deadline | None = None):
        super().__init__(f"{source}: fetching {url} failed: {reason}")
        self.source, self.url, self.reason, self.deadline = source, url, reason, deadline


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


def seconds_setting(name: str, default: float) -> float:
    """The environment variable `name` as a positive, finite number of seconds (unset or
    empty: `default`); anything else is a ValueError naming the variable."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, got {raw!r}") from None
    if not 0 < value < float("inf"):  # NaN fails this too
        raise ValueError(f"{name} must be a positive number of seconds, got {raw!r}")
    return value


def deadline_from_env() -> float:
    """BENCHPRESS_FETCH_DEADLINE in seconds (default 120); a bad value is an error, not a guess."""
    return seconds_setting(DEADLINE_ENV, DEFAULT_DEADLINE)


class _BodyDecoder:
    """Undo one Content-Encoding with bounded output, so a decompression bomb never inflates
    past the cap in memory. Concatenated gzip members are decoded like `gzip -d` does."""

    def __init__(self, encoding: str):
        self.encoding = encoding
        self._gzip = encoding in ("gzip", "x-gzip")
        self._obj = zlib.decompressobj(16 + zlib.MAX_WBITS if self._gzip else zlib.MAX_WBITS)
        self._started = False

    def decompress(self, data: bytes, limit: int) -> bytes:
        """Up to `limit` decoded bytes of `data` (more input than that is left unread)."""
        if not self._started and self.encoding == "deflate":
            self._started = True
            try:  # RFC 9110 says zlib-wrapped; some servers send a raw deflate stream
                return self._obj.decompress(data, limit)
            except zlib.error:
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
        self._started = True
        out = self._obj.decompress(data, limit)
        while self._gzip and self._obj.eof and self._obj.unused_data and len(out) < limit:
            rest = self._obj.unused_data  # the next gzip member
            self._obj = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out += self._obj.decompress(rest, limit - len(out))
        return out

    def finish(self) -> bytes:
        """What is left; a stream that stops before its end is a truncated body."""
        tail = self._obj.flush()
        if not self._obj.eof:
            raise zlib.error("compressed stream ends early")
        return tail


def _decoder(source: str, url: str, header: str | None) -> _BodyDecoder | None:
    encodings = [e.strip().lower() for e in (header or "").split(",") if e.strip()]
    encodings = [e for e in encodings if e != "identity"]
    if not encodings:
        return None
    if len(encodings) == 1 and encodings[0] in ("gzip", "x-gzip", "deflate"):
        return _BodyDecoder(encodings[0])
    raise FetchError(source, url, f"unsupported Content-Encoding {header!r}")


class Fetcher:
    """Fetch URLs through one transport; retries 5xx and connection errors with backoff.

    `deadline` (seconds, default BENCHPRESS_FETCH_DEADLINE or 120) bounds one URL's fetch,
    retries and waits included."""

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
        deadline: float | None = None,
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
        # a source fetching several URLs at once gives each thread a session of its own
        # (requests' sessions are not thread-safe); a session passed in is always used as is
        self._threads = None if session is not None else threading.local()
        self._owner = threading.get_ident()
        self.clock = clock
        self.sleep = sleep
        self.deadline = deadline_from_env() if deadline is None else float(deadline)
        if not self.deadline > 0:
            raise ValueError(f"deadline must be a positive number of seconds, got {deadline!r}")
        self._recorded: dict[str, dict[str, str]] | None = None

    def fetch(
        self,
        source: str,
        url: str,
        max_bytes: int,
        previous: Validators | None = None,
        stop: Deadline | None = None,
    ) -> FetchedPayload:
        """One URL. `stop`: an outer deadline (the source's or run's budget); the download
        ends at it or at this URL's own deadline, whichever comes first."""
        if self.mode == "replay":
            return self._replay(source, url, max_bytes)
        target = url if self.mode == "live" else mirror_url(url, self.mirror or "")
        own = Deadline(time.monotonic() + self.deadline, self.deadline, DOWNLOAD, DEADLINE_ENV)
        deadline = stop if stop is not None and stop.at < own.at else own
        return self._http(source, url, target, max_bytes, previous or Validators(), deadline)

    def _session(self) -> requests.Session:
        """This thread's session: the constructor's in the thread that made the fetcher (or
        for an injected session), a new one with the same headers in any other thread."""
        if self._threads is None or threading.get_ident() == self._owner:
            return self.session
        own = getattr(self._threads, "session", None)
        if own is None:
            own = requests.Session()
            own.headers.update(self.session.headers)
            self._threads.session = own
        return own

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
        self,
        source: str,
        url: str,
        target: str,
        max_bytes: int,
        previous: Validators,
        deadline: Deadline,
    ) -> FetchedPayload:
        headers = {"Accept-Encoding": ACCEPT_ENCODING}
        if previous.etag:
            headers["If-None-Match"] = previous.etag
        if previous.last_modified:
            headers["If-Modified-Since"] = previous.last_modified
        last_reason = "no attempt made"
        for attempt in range(self.retries + 1):
            wait = self.backoff * (2**attempt)
            remaining = deadline.at - time.monotonic()
            if remaining <= 0:
                reason = f"{deadline.text()} ({last_reason})"
                raise FetchError(source, url, reason, deadline)
            # no single socket wait may outlast the deadline either
            timeout = (min(self.timeout[0], remaining), min(self.timeout[1], remaining))
            try:
                response = self._session().get(
                    target, headers=headers, timeout=timeout, stream=True
                )
            except requests.Timeout:
                if time.monotonic() >= deadline.at:
                    raise FetchError(source, url, deadline.text(), deadline) from None
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
                        return self._accept(source, url, response, max_bytes, deadline)
            if attempt < self.retries:
                if time.monotonic() + wait >= deadline.at:
                    raise FetchError(
                        source,
                        url,
                        f"{last_reason}; waiting {wait:g}s for attempt {attempt + 2} would pass "
                        f"the {deadline.seconds:g}s {_scope(deadline)}deadline "
                        f"({deadline.setting})",
                        deadline,
                    )
                self.sleep(wait)
        raise FetchError(source, url, f"{last_reason} after {self.retries + 1} attempts")

    def _accept(
        self,
        source: str,
        url: str,
        response: requests.Response,
        max_bytes: int,
        deadline: Deadline,
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
        content = self._read_body(source, url, response, max_bytes, deadline)
        if not content:
            raise FetchError(source, url, "empty body")
        path = urlsplit(url).path.lower()
        is_html_url = path.endswith((".html", ".htm"))
        if content_type and content_type.lower().startswith("text/html") and not is_html_url:
            raise FetchError(source, url, "server returned an HTML page with status 200")
        return FetchedPayload(
            source, url, self.mode, 200, fetched_at, content, content_type, etag, last_modified
        )

    def _read_body(
        self,
        source: str,
        url: str,
        response: requests.Response,
        max_bytes: int,
        deadline: Deadline,
    ) -> bytes:
        """The decoded body. `Content-Length` counts the bytes on the wire, so it is compared
        with the raw count; the cap applies to the raw and to the decoded size."""
        declared = response.headers.get("Content-Length", "").strip()
        expected = int(declared) if declared.isdigit() else None
        decoder = _decoder(source, url, response.headers.get("Content-Encoding"))
        chunks: list[bytes] = []
        received = decoded = 0
        try:
            while True:
                if time.monotonic() >= deadline.at:
                    raise FetchError(source, url, deadline.text(received), deadline)
                # read1: whatever has arrived (one socket read), so the deadline is checked
                # while a slow server trickles, not only after a full chunk
                block = response.raw.read1(READ_CHUNK, decode_content=False)
                if not block:
                    break
                received += len(block)
                if received > max_bytes:
                    raise FetchError(source, url, f"body exceeds the cap of {max_bytes} bytes")
                if decoder is not None:
                    block = decoder.decompress(block, max_bytes - decoded + 1)
                decoded += len(block)
                if decoded > max_bytes:
                    raise FetchError(
                        source,
                        url,
                        f"decoded body exceeds the cap of {max_bytes} bytes after {received} "
                        "bytes on the wire (decompression bomb?)",
                    )
                chunks.append(block)
            if decoder is not None:
                tail = decoder.finish()
                decoded += len(tail)
                if decoded > max_bytes:
                    raise FetchError(source, url, f"decoded body exceeds the cap of {max_bytes}")
                chunks.append(tail)
        except urllib3.exceptions.ReadTimeoutError:
            if time.monotonic() >= deadline.at:
                raise FetchError(source, url, deadline.text(received), deadline) from None
            reason = f"body stalled: no data for {self.timeout[1]:g}s after {received} bytes"
            raise FetchError(source, url, reason) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            of = f"{received} of {expected}" if expected is not None else f"{received}"
            reason = f"body truncated: {of} bytes ({type(exc).__name__})"
            raise FetchError(source, url, reason) from None
        except zlib.error as exc:
            encoding = decoder.encoding if decoder else "compressed"
            reason = f"body truncated or corrupt: {encoding} data after {received} bytes ({exc})"
            raise FetchError(source, url, reason) from None
        if expected is not None and expected != received:
            raise FetchError(source, url, f"body truncated: {received} of {expected} bytes")
        return b"".join(chunks)


def _scope(deadline: Deadline) -> str:
    """Nothing for a URL's own deadline (its message has always said just "deadline"),
    else `source ` or `run `."""
    return "" if deadline.scope == DOWNLOAD else f"{deadline.scope} "
