"""One setting read from the environment that must be one of a few names."""

from __future__ import annotations

import os
from collections.abc import Collection


def env_choice(name: str, choices: Collection[str], default: str, what: str) -> str:
    """The variable `name` (unset or empty: `default`), refused with a message naming it and
    the choices when it is anything else. `what`: the kind of thing chosen, for that message."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if raw not in choices:
        raise ValueError(
            f"{name}={raw!r} is not {what}; choose {' or '.join(choices)} (default {default})"
        )
    return raw
