"""`benchpress app`: a small local web page over the Python API (Starlette on uvicorn).

The modules each do one job: `params` validates query parameters, `catalog` finds and caches
snapshot versions, `figures` turns a fit into plot data, `picker` validates and caches probe
selections (`/api/probes`), `uploads` reads a results file given to the page (`/api/results`),
`private` puts the team's private models and checkpoint runs beside the snapshot (`/api/private`,
`/api/runs`), `api` maps parameters to JSON-able dicts (the same answers and
error messages as `BenchPress`), `dispatch` turns one request into its answer; the HTTP
plumbing is `asgi` (the Starlette app, serving `static/`: vanilla JS building the DOM with
textContent, inline SVG charts), `protocol` and `heads` (uvicorn's h11 protocol with deadlines,
a connection cap and checked heads), `workers` (handler threads) and `server` (binds, runs).
"""

from predictor.web.catalog import Catalog
from predictor.web.server import AppServer, make_server

__all__ = ["AppServer", "Catalog", "make_server"]
