"""Who may ask the app: loopback Host names, and no other site's page.

Pure functions over header values, used both where a request head is first read
(`predictor.web.heads`, which picks the body cap) and by the ASGI app (`predictor.web.asgi`):
a DNS-rebinding page names another host, and a page on another site sends `Sec-Fetch-Site:
cross-site` or an `Origin` that is not this server.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "localhost."})
# Sec-Fetch-Site values the API answers: the page itself, or no page (typed URL, bookmark); a
# request without the header (curl, scripts, older browsers) is judged by its Origin alone
FETCH_SITES = frozenset({"same-origin", "none"})
CROSS_SITE = "the API answers this app's own page only, not other sites"
BAD_HOST = "unexpected Host header: this app answers on loopback names only"


def is_loopback(host: str) -> bool:
    """`127.0.0.1`, `::1`, `[::1]`, `localhost`: names that only reach this machine."""
    host = host.strip("[]")
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """`127.0.0.1:8765` -> `127.0.0.1`; `[::1]:8765` -> `::1`."""
    header = header.strip()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def loopback_host(header: str | None) -> bool:
    """A Host header naming this machine (a DNS-rebinding page names its own domain)."""
    return header is not None and is_loopback(host_name(header))


def same_origin(origin: str, host: str | None) -> bool:
    """`Origin: http://127.0.0.1:8765` names this server (`Host: 127.0.0.1:8765`)."""
    if host is None:
        return False
    try:
        seen, served = urlsplit(origin.strip()), urlsplit(f"//{host.strip()}")
        default = 443 if seen.scheme == "https" else 80
        ours = (served.hostname, served.port or default)
        return seen.scheme in ("http", "https") and (seen.hostname, seen.port or default) == ours
    except ValueError:  # a port that is not a number
        return False


def cross_site(fetch_site: str | None, origin: str | None, host: str | None) -> bool:
    """A request made by another site's page (`<img src>`, a form, fetch): by the browser's
    Sec-Fetch-Site, else by an Origin that is not this server."""
    if fetch_site is not None and fetch_site.strip().lower() not in FETCH_SITES:
        return True
    return origin is not None and not same_origin(origin, host)
