"""The team's private models as reference models, one spelling everywhere: `private:NAME`.

`benchpress models add NAME --from FILE` stores a private model in BENCHPRESS_HOME. Wherever a
known model is taken as a reference (`BenchPress.compare_with_known_models`, `benchpress
compare --reference`, `run --compare`, the web page), `private:NAME` names that private model
only, and a bare NAME is a snapshot model first, else the private model of exactly that name.
An unknown `private:NAME` is an `UnknownNameError` listing the private models and close
names; an unknown bare name may be a mistyped private one, so the private models close to it
are suggested (as `private:NAME`) beside the snapshot's close names.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from predictor.names.resolve import UnknownNameError
from predictor.private import PrivateModel

PREFIX = "private:"
SHOWN = 10  # private models listed in an error
CLOSE = 5  # close names suggested


def explicit(name: str) -> bool:
    """`private:NAME` asks for a private model only, never a snapshot model."""
    return name.startswith(PREFIX)


def find_private(models: Sequence[PrivateModel], name: str) -> PrivateModel:
    """The private model `private:NAME` names; `UnknownNameError` naming it, the private
    models there are and the close ones, when there is none."""
    wanted = name[len(PREFIX) :] if explicit(name) else name
    match = next((m for m in models if m.name == wanted), None)
    if match is not None:
        return match
    names = [m.name for m in models]
    listed = ", ".join(names[:SHOWN]) + (", ..." if len(names) > SHOWN else "")
    known = (
        f"private models: {listed}"
        if names
        else "no private model is stored (benchpress models add NAME --from FILE stores one)"
    )
    close = difflib.get_close_matches(wanted, names, n=CLOSE, cutoff=0.5)
    raise UnknownNameError("private model", wanted, [f"{PREFIX}{c}" for c in close], known)


def with_private_suggestions(
    unknown: UnknownNameError, models: Sequence[PrivateModel]
) -> UnknownNameError:
    """`unknown` (a snapshot's unknown model) with the private models close to its name
    suggested first, as `private:NAME`; itself when none is close."""
    names = [m.name for m in models]
    close = difflib.get_close_matches(unknown.name, names, n=CLOSE, cutoff=0.6)
    if not close:
        return unknown
    suggestions = [f"{PREFIX}{c}" for c in close] + list(unknown.suggestions)
    return UnknownNameError(unknown.kind, unknown.name, suggestions[:CLOSE], unknown.known)
