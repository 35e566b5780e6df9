"""SWE-bench leaderboards (swebench.com): one JSON file holding every board.

Each board (`bash-only`, `Verified`, `Lite`, `Test`, `Multimodal`, ...) is a list of submitted
runs keyed by `folder` (display names repeat, e.g. `devlo` x3 on Verified; a folder is one run,
so one listed twice on a board is a ParseError naming both results). The board name is the
benchmark key; `resolved` is the percent of instances resolved. Entries on the agent boards are
systems, not models: the underlying model ids are only in `tags` (`Model: <id>`), kept in `extra`.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from pipelines.sources.base import (
    ParseError,
    Source,
    extra_json,
    finite_value,
    load_json,
    reject_repeated_keys,
    scores_frame,
)

SOURCE_ID = "swebench"
URL = (
    "https://raw.githubusercontent.com/SWE-bench/swe-bench.github.io/master/data/leaderboards.json"
)

# Run facts copied into `extra` as published (scalars only).
EXTRA_FIELDS = {
    "date": "eval_date",
    "cost": "cost",  # total USD for the run; 0 = unknown / free
    "instance_cost": "instance_cost",  # mean USD per instance
    "instance_calls": "instance_calls",  # mean API calls per instance
    "os_model": "os_model",
    "os_system": "os_system",
    "checked": "checked",
    "site": "site",
    "logs": "logs",
    "trajs": "trajs",
    "trajs_docent": "trajs_docent",
    "warning": "warning",
    "mini-swe-agent_version": "mini_swe_agent_version",
}


def _tags(tags: object) -> dict[str, object]:
    """`Model: x` (repeatable), `Org: y`, `System: Attempts - 1`, ... -> extra facts."""
    if not isinstance(tags, list):
        return {}
    models: list[str] = []
    facts: dict[str, object] = {}
    for tag in tags:
        if not isinstance(tag, str) or ":" not in tag:
            continue
        kind, _, value = tag.partition(":")
        kind, value = kind.strip().lower(), value.strip()
        if not value:
            continue
        if kind == "model":
            models.append(value)
        elif kind == "org":
            facts["organization"] = value
        elif kind == "system":
            facts["attempts"] = value.removeprefix("Attempts - ").strip()
        else:
            facts[kind] = value
    if models:
        facts["models"] = models
    return facts


def _per_instance(details: object) -> dict[str, object]:
    if not isinstance(details, dict) or not details:
        return {}
    resolved = sum(1 for d in details.values() if isinstance(d, dict) and d.get("resolved") is True)
    return {"per_instance_count": len(details), "per_instance_resolved": resolved}


def _scalar(value: object) -> object:
    return value if isinstance(value, str | int | float | bool) else None


def _agent(board: str, run: dict) -> str | None:
    version = run.get("mini-swe-agent_version")
    if isinstance(version, str) and version.strip():
        return f"mini-swe-agent {version.strip()}"
    if board == "bash-only":  # the board's fixed scaffold, version not stated in older files
        return "mini-swe-agent"
    return None


def parse(payloads: Mapping[str, bytes]) -> pl.DataFrame:
    if URL not in payloads:
        raise ParseError(SOURCE_ID, URL, "payload missing")
    doc = load_json(SOURCE_ID, URL, payloads[URL])
    if not isinstance(doc, dict) or not isinstance(doc.get("leaderboards"), list):
        raise ParseError(SOURCE_ID, URL, "missing key 'leaderboards' (a list of boards)")
    rows: list[dict[str, object]] = []
    for b, board in enumerate(doc["leaderboards"]):
        board_ref = f"leaderboards[{b}]"
        if not isinstance(board, dict) or not isinstance(board.get("results"), list):
            raise ParseError(SOURCE_ID, URL, "board without a 'results' list", board_ref)
        name = board.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ParseError(SOURCE_ID, URL, "board without a 'name'", board_ref)
        name = name.strip()
        for r, run in enumerate(board["results"]):
            ref = f"{board_ref}.results[{r}] ({name})"
            common: dict[str, object] = {
                "source": SOURCE_ID,
                "payload_url": URL,
                "row_ref": ref,
                "benchmark_key": name,
                "benchmark_name": f"SWE-bench {name}",
                "unit": "percent",
            }
            if not isinstance(run, dict):
                reason = f"result is a {type(run).__name__}, not an object"
                rows.append({**common, "value": None, "extra": extra_json({"rejected": reason})})
                continue
            facts: dict[str, object] = {}
            for field, target in EXTRA_FIELDS.items():
                value = _scalar(run.get(field))
                if value is not None:
                    facts[target] = value
            facts.update(_tags(run.get("tags")))
            facts.update(_per_instance(run.get("per_instance_details")))
            key = run.get("folder")
            key = key.strip() if isinstance(key, str) and key.strip() else None
            display = run.get("name")
            display = display.strip() if isinstance(display, str) and display.strip() else None
            value = None
            if key is None:
                facts["rejected"] = "missing folder"
            elif run.get("resolved") is None:
                facts["rejected"] = "missing resolved"
            else:
                value = finite_value(SOURCE_ID, URL, run["resolved"], f"{ref}.resolved")
                if value is None:
                    facts["rejected"] = "blank resolved"
                elif not 0.0 <= value <= 100.0:
                    raise ParseError(SOURCE_ID, URL, f"resolved={value} outside 0-100", ref)
            if value is None and "rejected" in facts and _scalar(run.get("resolved")) is not None:
                facts["published_value"] = run.get("resolved")
            rows.append(
                {
                    **common,
                    "model_key": key,
                    "model_name": display,
                    "value": value,
                    "agent": _agent(name, run),
                    "extra": extra_json(facts),
                }
            )
    return reject_repeated_keys(SOURCE_ID, scores_frame(rows))


SOURCE = Source(
    id=SOURCE_ID,
    title="SWE-bench leaderboards (bash-only, Verified, Lite, Test, Multimodal)",
    homepage="https://www.swebench.com/",
    urls=(URL,),
    parse=parse,
    licence="CC BY-NC 4.0 (SWE-bench/swe-bench.github.io repository): non-commercial",
    attribution="Jimenez et al., SWE-bench: Can Language Models Resolve Real-World GitHub Issues?, "
    "ICLR 2024; leaderboard data from swebench.com",
    priority=40,
    frontier=True,
    run_costs=True,
    one_model_agent="mini-swe-agent",  # the bash-only runs; the other boards rank systems
    max_bytes=32 * 1024 * 1024,  # 4.2 MB in Dec 2025 and growing (per-instance details)
)
