"""Latency of predicting one new model from its probe scores, after the fit state is loaded.

Fits the default method on the BenchPress paper matrix with its side information (release
dates, families, categories; `--method als`: the reference recipe, which uses none, and whose
fold-in the test suite once held to 5 ms), round-trips its state through JSON (`export_state` /
`restore_state`, what a published snapshot carries), then times, for new models given only the
five probe scores (and their release date and family): `fold_in` (means), `fold_in_interval`
(90% interval), and both together. Each is timed over many calls; the median and the 99th
percentile are reported. No refit happens: the new model is folded in against the stored
benchmark draws. The last line is the median of one new model (means + interval) after load.

    python benchmarks/foldin_latency.py [--method bayes] [--repeats 500] [--out latency.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from predictor.evaluation.protocols import (  # noqa: E402
    DEFAULT_MATRIX_PATH,
    DEFAULT_REGISTRY_PATH,
    PAPER_PROBES,
    load_paper_matrix,
)
from predictor.fit.fitted_state import export_state, restore_state  # noqa: E402
from predictor.methods.registry import DEFAULT_METHOD, METHODS, make_completer  # noqa: E402
from predictor.side_information import paper_side_information  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_MATRIX_PATH)
    parser.add_argument("--method", choices=tuple(METHODS), default=DEFAULT_METHOD)
    parser.add_argument("--repeats", type=int, default=500)
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)

    values, model_ids, benchmark_ids, scales = load_paper_matrix(args.data)
    side = paper_side_information(args.data, DEFAULT_REGISTRY_PATH, benchmark_ids)
    completer = make_completer(args.method)
    uses_side = bool(completer.side_information)  # the recipe (als) takes none
    fitted = completer.fit(values, scales, **(side.fit_kwargs() if uses_side else {}))
    state = json.loads(json.dumps(export_state(fitted)))
    start = time.perf_counter()
    model = restore_state(state, values)
    load_ms = (time.perf_counter() - start) * 1000

    probes = [benchmark_ids.index(b) for b in PAPER_PROBES]
    rows = []  # each paper model's probe scores, date and family: stand-ins for new models
    for i in range(values.shape[0]):
        row = np.full(values.shape[1], np.nan)
        row[probes] = values[i, probes]
        if np.isfinite(row).any():
            about = {"features": side.model_features(i), "group": side.model_group(i)}
            rows.append((row, about if uses_side else {}))
    model.fold_in(rows[0][0], **rows[0][1])  # warm caches (e.g. the t quantile)
    model.fold_in_interval(rows[0][0], **rows[0][1])

    def timed(fn) -> np.ndarray:
        out = np.empty(args.repeats)
        for k in range(args.repeats):
            row, about = rows[k % len(rows)]
            start = time.perf_counter()
            fn(row, about)
            out[k] = (time.perf_counter() - start) * 1000
        return out

    results = {
        "fold_in": timed(lambda r, a: model.fold_in(r, **a)),
        "fold_in_interval": timed(lambda r, a: model.fold_in_interval(r, **a)),
        "both": timed(lambda r, a: (model.fold_in(r, **a), model.fold_in_interval(r, **a))),
    }
    summary = {
        name: {"median_ms": float(np.median(t)), "p99_ms": float(np.percentile(t, 99))}
        for name, t in results.items()
    }
    print(
        f"method {args.method}; state: {len(json.dumps(state)) / 1e3:.0f} kB JSON, "
        f"restore {load_ms:.1f} ms; "
        f"{len(rows)} probe rows, {args.repeats} calls each"
    )
    for name, s in summary.items():
        print(f"  {name:<18} median {s['median_ms']:.2f} ms   p99 {s['p99_ms']:.2f} ms")
    print(f"one new model (means + interval): {summary['both']['median_ms']:.2f} ms median")
    if args.out:
        Path(args.out).write_text(
            json.dumps({"summary": summary, "restore_ms": load_ms}, indent=2) + "\n"
        )
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
