"""`benchpress app`: serve the web page (predict, compare, matrix, fit plots) on this machine."""

from __future__ import annotations

import argparse
import sys

from predictor.cli.commands import APP
from predictor.cli.options import STORE_HELP, add_commands
from predictor.snapshots.stores import LocalStore, open_store
from predictor.web import server as web_server  # patched by tests: looked up when called
from predictor.web.guards import is_loopback

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def app_arguments(app: argparse.ArgumentParser) -> None:
    app.description = (
        "A local web page: predictions with intervals from probe scores, model "
        "comparison, the matrix with provenance and plots of the fit; plus its JSON API."
    )
    app.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST})"
    )
    app.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free)"
    )
    app.add_argument("--store", help=STORE_HELP + " (default: local store, then bundled)")
    app.add_argument("--quiet", action="store_true", help="do not log requests")
    app.set_defaults(func=cmd_app)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `app` to a parser's sub-commands."""
    add_commands(subparsers, APP)


def cmd_app(args: argparse.Namespace) -> int:
    """Bind, say where, serve until Ctrl-C."""
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must lie in 0-65535, got {args.port}")
    web_server.require_web_stack()
    if args.store is not None:  # a typo in --store: say so, as `predict --store` does
        store = open_store(args.store)
        if isinstance(store, LocalStore):
            store.require_root()
    try:
        server = web_server.make_server(args.host, args.port, store=args.store, quiet=args.quiet)
    except OSError as exc:
        reason = exc.strerror or exc
        raise ValueError(f"cannot listen on {args.host}:{args.port}: {reason}") from None
    if not is_loopback(args.host):
        print(
            f"benchpress: warning: listening on {args.host}: anyone who can reach this address "
            "can use the app",
            file=sys.stderr,
        )
    versions = server.catalog.versions()
    shown = f"{len(versions)} snapshot version(s), newest {versions[0]}" if versions else "none"
    print(f"benchpress app: snapshots: {shown}", flush=True)
    print(f"benchpress app: serving on {server.url} (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("benchpress app: stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0
