"""uvicorn's h11 protocol with the limits it lacks against slow and hostile clients.

uvicorn closes idle keep-alive connections, but nothing bounds the time a client takes to send
a request head: one header line every 20 s holds a connection forever. This subclass adds:

- a header deadline: the request line and headers must arrive within `Limits.header_seconds`
  of the connection opening (or of the previous answer); then 408 and close. A connection
  that sent nothing is closed without an answer;
- checked heads: each head goes through `predictor.web.heads` before h11 parses it, so a bad
  request line, header, Content-Length or size is a JSON 400/411/413/414/431 naming it, and
  the log shows the request line escaped;
- a connection cap: at most `Limits.max_connections` open. A connection beyond it closes the
  one that has waited longest for a request head while being slow about it (part of a head
  sent, idle after an answer, or silent for a second since connecting): a slow client loses
  its place to a new one. If none may go, the new connection waits for its request, looks
  again, and is answered 503 with Retry-After if there is still no room;
- a flush deadline: a client that does not read its answer is dropped after
  `Limits.flush_seconds`.

The body and the answer have their own deadline in the ASGI app (`predictor.web.asgi`).
Connections cost no thread: slow clients hold sockets on the event loop, never a handler.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from predictor.web.answers import raw_error
from predictor.web.heads import HeadError, RequestFraming
from predictor.web.limits import Limits
from predictor.web.logs import RequestLog

REFUSED_SECONDS = 1.0  # a refused connection that sends nothing is closed after this
FRESH_SECONDS = 1.0  # a new connection that sent nothing is not closed to make room before
LINGER_SECONDS = 2.0  # after an error answer, what the client still sends is read and dropped


class AppProtocol(H11Protocol):
    """One client connection (uvicorn makes one per accepted socket)."""

    def __init__(
        self,
        config: Any,
        server_state: Any,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
        *,
        limits: Limits,
        requests: RequestLog,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.limits = limits
        self.requests = requests
        self.logger = requests.http  # uvicorn's own warnings (a request h11 cannot parse)
        self.framing = RequestFraming(limits)
        self.waiting_since: float | None = None  # waiting for a request head since (loop time)
        self.refused = False  # opened beyond the cap with no connection to close for it
        self.lingering = False  # answered and half-closed: draining what the client still sends
        self.held: HeadError | None = None  # a bad pipelined head, answered after the current
        self._head_timer: asyncio.TimerHandle | None = None
        self._flush_timer: asyncio.TimerHandle | None = None

    # ------------------------------------------------------------------ connection events
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if self._over_cap() and not self._make_room():
            self.refused = True
            self._head_timer = self.loop.call_later(REFUSED_SECONDS, self._close)
            return
        self._await_head()

    def data_received(self, data: bytes) -> None:
        if self.lingering:
            return
        if self.refused and not self._admit():
            self._refuse(data)
            return
        self._unset_keepalive_if_required()
        fed = self.framing.feed(data)
        if fed.data:
            super().data_received(fed.data)
        if fed.heads:
            self._stop(self._head_timer)
            self.waiting_since = None
        if fed.error is not None:
            if self.cycle is not None and not self.cycle.response_complete:
                self.held = fed.error  # pipelined behind a request being answered
            else:
                self._answer_and_close(fed.error.status, fed.error.message)

    def on_response_complete(self) -> None:
        self._watch_flush()
        answered = self.cycle
        super().on_response_complete()
        if self.transport.is_closing() or self.cycle is not answered:
            return  # closed, or the next pipelined request has started
        if self.held is not None:
            self._answer_and_close(self.held.status, self.held.message)
            return
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop(self._head_timer)
        self._stop(self._flush_timer)
        self.waiting_since = None
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """h11 refused a head that passed the checks: the same JSON answer as for others."""
        self._answer_and_close(400, "malformed HTTP request")

    # -------------------------------------------------------------------------- deadlines
    def _await_head(self) -> None:
        self.waiting_since = self.loop.time()
        self._stop(self._head_timer)
        self._head_timer = self.loop.call_later(self.limits.header_seconds, self._head_timeout)

    def _head_timeout(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self.waiting_since is None:
            return
        if self.framing.mid_head:
            seconds = self.limits.header_seconds
            message = f"the request line and headers did not arrive within {seconds:g} s"
            self._answer_and_close(408, message)
        else:
            self._close()

    def _watch_flush(self) -> None:
        """Drop the connection if the answer just sent is still unread after `flush_seconds`."""
        self._stop(self._flush_timer)
        self._flush_timer = None
        if self.transport.get_write_buffer_size():
            self._flush_timer = self.loop.call_later(self.limits.flush_seconds, self._flushed)

    def _flushed(self) -> None:
        self._flush_timer = None
        if self.transport.get_write_buffer_size():
            self.transport.abort()

    # ------------------------------------------------------------------ the connection cap
    def _over_cap(self) -> bool:
        """More connections open (not closing or lingering) than `max_connections`."""
        cap = self.limits.max_connections
        if len(self.connections) <= cap:
            return False
        closing = (
            c.transport.is_closing() or getattr(c, "lingering", False) for c in self.connections
        )
        return sum(not gone for gone in closing) > cap

    def _make_room(self) -> bool:
        """Close the connection that has waited longest for a request head, if one may go."""
        now = self.loop.time()
        idle = [
            c
            for c in self.connections
            if isinstance(c, AppProtocol) and c is not self and c._evictable(now)
        ]
        if not idle:
            return False
        min(idle, key=lambda c: c.waiting_since or 0.0)._evict()
        return True

    def _evictable(self, now: float) -> bool:
        """Waiting for a head, and slow about it: part of one sent, or idle after an answer,
        or silent for FRESH_SECONDS since connecting (a client sends its request at once;
        closing a connection it is about to write to would reset it)."""
        if self.waiting_since is None or self.refused or self.lingering:
            return False
        if self.transport.is_closing():
            return False
        answered = self.cycle is not None  # idle on keep-alive after at least one answer
        return self.framing.mid_head or answered or now - self.waiting_since >= FRESH_SECONDS

    def _admit(self) -> bool:
        """A connection opened beyond the cap gets in when its request arrives, if there is
        room by then (in a burst, the others have sent part of a head, or left)."""
        if self._over_cap() and not self._make_room():
            return False
        self.refused = False
        self._await_head()
        return True

    def _evict(self) -> None:
        if self.framing.mid_head:
            message = (
                f"the server is at its limit of {self.limits.max_connections} connections and "
                "this one had not sent a whole request; try again"
            )
            self._answer_and_close(503, message, {"Retry-After": "1"})
        else:
            self._close()

    def _refuse(self, data: bytes) -> None:
        message = (
            f"the server has {self.limits.max_connections} connections open, the most it "
            "serves at once; try again in a few seconds"
        )
        line = data.split(b"\n", 1)[0][: self.limits.max_request_line].rstrip(b"\r")
        self._answer_and_close(503, message, {"Retry-After": "1"}, line.decode("latin-1"))

    # ---------------------------------------------------------------------------- answers
    def _answer_and_close(
        self,
        status: int,
        message: str,
        extra: dict[str, str] | None = None,
        line: str | None = None,
    ) -> None:
        if self.transport.is_closing() or self.lingering:
            return
        self.transport.write(raw_error(status, message, extra))
        client = self.client[0] if self.client else "-"
        shown = self.framing.shown_line() if line is None else line
        self.requests.answered(str(client), shown, status, None)
        self._linger()

    def _linger(self) -> None:
        """Half-close after an error answer and drop what the client still sends for a moment:
        closing with its bytes unread would reset the connection, and a client still sending
        (a body over the cap) could lose the answer."""
        self.lingering = True
        self.waiting_since = None
        self._stop(self._head_timer)
        if not self.transport.can_write_eof():
            self._close()
            return
        self.transport.write_eof()  # the client reads the answer, then sees the end
        self._head_timer = self.loop.call_later(LINGER_SECONDS, self._close)

    def _close(self) -> None:
        self.waiting_since = None
        self._stop(self._head_timer)
        if not self.transport.is_closing():
            self.transport.close()
        self._watch_flush()

    @staticmethod
    def _stop(timer: asyncio.TimerHandle | None) -> None:
        if timer is not None:
            timer.cancel()
