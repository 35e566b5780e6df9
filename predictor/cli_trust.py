"""`benchpress compare | probes | next | suspicious`: trustworthy-answer commands.

Wired into `benchpress` by `register(subparsers)`; every command prints a table, or JSON with
`--json`. Helpers of `predictor.cli` are imported inside the commands (cli imports this
module at load time).
"""

from __future__ import annotations

import argparse
import json
import math

STORE_HELP = "snapshot store: a directory, s3://bucket/prefix or https:// URL"
TARGETS_HELP = "a profile (coding_assistant, chat, reasoning, general_assistant) or name,name,..."


def _load(args: argparse.Namespace):
    from predictor.api import BenchPress

    return BenchPress.load(args.version, store=args.store)


def _targets(text: str | None):
    from predictor.trust.profiles import PROFILES

    if text is None or text in PROFILES:
        return text
    return [t.strip() for t in text.split(",") if t.strip()]


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _dump(payload) -> None:
    print(json.dumps(payload, indent=2, default=_clean))


def _rows(frame) -> list[dict]:
    return [{k: _clean(v) for k, v in r.items()} for r in frame.to_dicts()]


def _table(rows, columns) -> None:
    from predictor.cli import print_table

    if rows:
        print_table([{c: ("" if r[c] is None else r[c]) for c in columns} for r in rows], columns)
    else:
        print("(nothing)")


def _parse_model(text: str) -> tuple[str | None, dict[str, float]]:
    """`NAME:bench=1,bench=2` or `bench=1,bench=2`."""
    from predictor.cli import parse_scores

    name, sep, rest = text.partition(":")
    if sep and "=" not in name:
        return name.strip(), parse_scores(rest)
    return None, parse_scores(text)


def cmd_compare(args: argparse.Namespace) -> int:
    from predictor.cli import CommandError
    from predictor.trust import compare_models, compare_with_known_models

    bp = _load(args)
    parsed = [_parse_model(t) for t in args.model]
    names = [n or f"model_{k + 1}" for k, (n, _) in enumerate(parsed)]
    probes = [p for _, p in parsed]
    targets = _targets(args.targets)
    if args.reference:
        if len(probes) != 1:
            raise CommandError("--reference compares exactly one --model")
        refs = [r.strip() for r in args.reference.split(",") if r.strip()]
        result = compare_with_known_models(
            bp,
            probes[0],
            refs,
            targets=targets or "general_assistant",
            level=args.level,
            name=names[0],
        )
        if args.json:
            _dump({"version": bp.version, "rows": _rows(result.to_frame())})
        else:
            print(result.summary())
        return 0
    if len(probes) < 2:
        raise CommandError("give two or more --model, or one --model with --reference")
    if targets is None:
        raise CommandError("--targets is required when comparing models")
    result = compare_models(bp, probes, targets, names=names, level=args.level)
    if args.json:
        _dump(
            {
                "version": bp.version,
                "rows": _rows(result.to_frame()),
                "pairwise": _rows(result.pairwise()),
            }
        )
        return 0
    _table(
        _rows(result.to_frame()),
        ["benchmark", "rank", "model", "score", "low", "high", "tie_group", "p_better_than_next"],
    )
    print()
    print(result.summary())
    return 0


def cmd_probes(args: argparse.Namespace) -> int:
    from predictor.trust import select_probes_for

    bp = _load(args)
    allow = [a.strip() for a in args.allow.split(",")] if args.allow else None
    sel = select_probes_for(
        bp, k=args.k, budget=args.budget, targets=_targets(args.targets), allowlist=allow
    )
    if args.json:
        _dump({"version": bp.version, **sel.as_dict()})
        return 0
    print(
        f"snapshot {bp.version}: greedy probes (expected MedAE of the targets, in-sample; "
        f"no probe: {sel.baseline_error:.2f})"
    )
    _table(
        _rows(sel.to_frame()), ["step", "benchmark", "expected_medae", "cost", "cumulative_cost"]
    )
    return 0


def cmd_next(args: argparse.Namespace) -> int:
    from predictor.cli import parse_scores
    from predictor.trust import what_to_run_next

    bp = _load(args)
    frame = what_to_run_next(
        bp,
        parse_scores(args.scores),
        targets=_targets(args.targets),
        budget=args.budget,
        top=args.top,
        level=args.level,
    )
    if args.json:
        _dump({"version": bp.version, "level": args.level, "rows": _rows(frame)})
        return 0
    print(
        f"snapshot {bp.version}: mean {int(args.level * 100)}% interval width of the targets "
        "before / after running each benchmark"
    )
    _table(
        _rows(frame),
        [
            "rank",
            "benchmark",
            "cost",
            "predicted",
            "width_before",
            "width_after",
            "reduction_per_cost",
        ],
    )
    return 0


def cmd_suspicious(args: argparse.Namespace) -> int:
    from predictor.trust import suspicious_scores

    bp = _load(args)
    frame = suspicious_scores(bp, threshold=args.threshold).head(args.top)
    if args.json:
        _dump({"version": bp.version, "threshold": args.threshold, "rows": _rows(frame)})
        return 0
    print(f"snapshot {bp.version}: observed scores with |leave-one-out z| > {args.threshold:g}")
    columns = ["model_id", "benchmark_id", "observed", "predicted", "z"]
    if "source" in frame.columns:
        columns.append("source")
    _table(_rows(frame), columns)
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--version", default="latest", help="snapshot version (default latest)")
    p.add_argument("--store", help=STORE_HELP)
    p.add_argument("--json", action="store_true", help="machine-readable output")


def register(subparsers) -> None:
    compare = subparsers.add_parser(
        "compare", help="rank models predicted from probe scores, with P(A better than B)"
    )
    compare.add_argument(
        "--model",
        action="append",
        required=True,
        help="[NAME:]name=value,name=value (repeat per model)",
    )
    compare.add_argument("--targets", help=TARGETS_HELP)
    compare.add_argument("--reference", help="snapshot models to rank one --model against")
    compare.add_argument("--level", type=float, default=0.9)
    _common(compare)
    compare.set_defaults(func=cmd_compare)

    probes = subparsers.add_parser("probes", help="which benchmarks to run as probes")
    probes.add_argument("--k", type=int, default=5)
    probes.add_argument("--budget", type=float, help="total cost budget (see trust.costs)")
    probes.add_argument("--targets", help=TARGETS_HELP)
    probes.add_argument("--allow", help="benchmarks allowed as probes: name,name,...")
    _common(probes)
    probes.set_defaults(func=cmd_probes)

    nxt = subparsers.add_parser("next", help="which benchmark to run next for a new model")
    nxt.add_argument("--scores", required=True, help="known scores: name=value,name=value")
    nxt.add_argument("--targets", help=TARGETS_HELP)
    nxt.add_argument("--budget", type=float, help="largest cost of one benchmark")
    nxt.add_argument("--top", type=int, default=5)
    nxt.add_argument("--level", type=float, default=0.9)
    _common(nxt)
    nxt.set_defaults(func=cmd_next)

    sus = subparsers.add_parser("suspicious", help="observed scores far from their prediction")
    sus.add_argument("--threshold", type=float, default=3.5)
    sus.add_argument("--top", type=int, default=50)
    _common(sus)
    sus.set_defaults(func=cmd_suspicious)
