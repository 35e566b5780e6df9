"""Before the first task: can every planned task load its dataset? lm-eval's built-in tasks
load theirs from the Hugging Face Hub (GPQA's, `Idavidrein/gpqa`, is gated: its terms must
be accepted), and offline the `datasets` library retries the Hub for minutes before a task
fails. This check asks the Hub once per dataset, within one short total deadline
(`DATASET_PREFLIGHT_SECONDS`), and fails the run with one line per problem naming the task,
the dataset and what to do.

What it reads, as `huggingface_hub` and `datasets` read it (from the environment at the time
of the check, not of import):

- `HF_ENDPOINT`: the Hub (default https://huggingface.co; a mirror or a test's loopback);
- `HF_HUB_OFFLINE` (or `HF_DATASETS_OFFLINE`, `TRANSFORMERS_OFFLINE`): no request is sent;
  a dataset must then be in the local cache;
- `HF_TOKEN` (or `HUGGING_FACE_HUB_TOKEN`, else the token file `huggingface-cli login`
  writes, `HF_TOKEN_PATH` or `HF_HOME/token`): sent to the Hub, never printed;
- the local cache: `HF_HUB_CACHE` (else `HF_HOME/hub`) holding `datasets--OWNER--NAME`, or
  `HF_DATASETS_CACHE` (else `HF_HOME/datasets`) holding `OWNER___NAME`.

A dataset that is a local folder or a file builder (`json`, `csv`, `parquet`, ...: a user's
own task, `--include-path`) needs no check. The Hub's answers used
(https://huggingface.co/docs/hub/api): `GET /api/datasets/REPO` (200 with `gated`: false,
"auto" or "manual"; 401 or 404: private or missing) and, for a gated one with a token,
`GET /api/datasets/REPO/auth-check` (200: access granted; 403: the terms are not accepted)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from predictor.runs.preflight import EndpointError, HttpAnswer, Unreachable, http_get

DATASET_PREFLIGHT_SECONDS = 15.0  # the whole check, every dataset together
DEFAULT_HUB = "https://huggingface.co"
OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")
TOKEN_VARIABLES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
# `datasets`' builders that read local files (`dataset_kwargs: data_files`), not a Hub repo
FILE_BUILDERS = frozenset({"json", "csv", "parquet", "text", "arrow", "pandas", "imagefolder"})
LOCAL_HINT = "or run your own local copy of the task (--task BENCHMARK=TASK --include-path DIR)"


@dataclass(frozen=True)
class TaskDataset:
    """One dataset a planned task loads: the task as planned, the Hub repo (`dataset_path`)
    and its configuration (`dataset_name`)."""

    task: str
    path: str
    name: str | None = None

    @property
    def shown(self) -> str:
        return self.path if not self.name else f"{self.path} ({self.name})"


class DatasetError(EndpointError):
    """Planned tasks cannot load their datasets: `problems`, one line each."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


def offline(env: Mapping[str, str]) -> str | None:
    """The variable that sets the Hub offline (`HF_HUB_OFFLINE=1`), None when none does."""
    for name in OFFLINE_VARIABLES:
        if env.get(name, "").strip().lower() in ("1", "true", "yes", "on"):
            return name
    return None


def _hf_home(env: Mapping[str, str]) -> Path:
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]).expanduser()
    xdg = env.get("XDG_CACHE_HOME") or str(Path("~/.cache").expanduser())
    return Path(xdg) / "huggingface"


def hub_token(env: Mapping[str, str]) -> str | None:
    """The Hub token as `huggingface_hub` finds it: the variables, else the login's file."""
    for name in TOKEN_VARIABLES:
        if env.get(name, "").strip():
            return env[name].strip()
    path = Path(env["HF_TOKEN_PATH"]) if env.get("HF_TOKEN_PATH") else _hf_home(env) / "token"
    try:
        text = path.expanduser().read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


def in_cache(repo: str, env: Mapping[str, str]) -> bool:
    """Whether the dataset was downloaded before (the Hub's cache or `datasets`' own)."""
    hub = env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE")
    hub_dir = Path(hub).expanduser() if hub else _hf_home(env) / "hub"
    snapshots = hub_dir / f"datasets--{repo.replace('/', '--')}" / "snapshots"
    if snapshots.is_dir() and any(snapshots.iterdir()):
        return True
    given = env.get("HF_DATASETS_CACHE")
    data_dir = Path(given).expanduser() if given else _hf_home(env) / "datasets"
    stem = repo.replace("/", "___")
    return any((data_dir / name).is_dir() for name in {stem, stem.lower()})


def is_local(dataset: TaskDataset, folders: Iterable[Path] = ()) -> bool:
    """A file builder or a folder (as given, or in an include folder): nothing to download."""
    if dataset.path.lower() in FILE_BUILDERS:
        return True
    candidates = [Path(dataset.path).expanduser(), *(Path(f) / dataset.path for f in folders)]
    return any(c.exists() for c in candidates)


def check_datasets(
    datasets: Sequence[TaskDataset],
    env: Mapping[str, str] | None = None,
    folders: Iterable[Path] = (),
    seconds: float = DATASET_PREFLIGHT_SECONDS,
) -> None:
    """Raise `DatasetError` (one line per task and Hub dataset, its configurations together)
    unless every dataset can load."""
    env = os.environ if env is None else env
    datasets = _grouped(datasets)
    hub = (env.get("HF_ENDPOINT") or DEFAULT_HUB).strip().rstrip("/")
    token = hub_token(env)
    off = offline(env)
    deadline = time.monotonic() + seconds
    answers: dict[str, str | None] = {}  # repo -> its problem (None: fine), asked once
    unreachable: str | None = None
    problems: list[str] = []
    for dataset in datasets:
        if is_local(dataset, folders):
            continue
        repo = dataset.path
        cached = in_cache(repo, env)
        if off is not None:
            if not cached:
                problems.append(
                    f"task {dataset.task}: dataset {dataset.shown} is not in the local Hugging "
                    f"Face cache and {off}=1 forbids downloading it: download it once online "
                    f"(unset {off}), {LOCAL_HINT}"
                )
            continue
        if repo not in answers and unreachable is None:
            try:
                answers[repo] = _ask_hub(hub, repo, token, deadline)
            except Unreachable as error:
                unreachable = str(error)
        if repo not in answers:
            problems.append(_unreachable_line(dataset, hub, unreachable or "", cached))
        elif answers[repo] is not None:
            problems.append(f"task {dataset.task}: dataset {dataset.shown} {answers[repo]}")
    if problems:
        raise DatasetError(problems)


def _grouped(datasets: Sequence[TaskDataset]) -> list[TaskDataset]:
    """One entry per task and dataset: a group's 27 BBH configurations are one dataset."""
    names: dict[tuple[str, str], list[str | None]] = {}
    for d in datasets:
        names.setdefault((d.task, d.path), []).append(d.name)
    out = []
    for (task, path), given in names.items():
        named = list(dict.fromkeys(n for n in given if n))
        name = named[0] if len(named) == 1 else f"{len(named)} configurations" if named else None
        out.append(TaskDataset(task, path, name))
    return out


def _unreachable_line(dataset: TaskDataset, hub: str, reason: str, cached: bool) -> str:
    head = f"task {dataset.task}: dataset {dataset.shown}: cannot reach the Hugging Face Hub {hub}"
    if cached:
        return (
            f"{head} ({reason}); it is in the local cache: set HF_HUB_OFFLINE=1 to load it "
            "from there without asking the Hub"
        )
    return f"{head} ({reason}) and it is not in the local cache: connect once, {LOCAL_HINT}"


def _ask_hub(hub: str, repo: str, token: str | None, deadline: float) -> str | None:
    """The problem with `repo` as the Hub answers it (None: it can be downloaded)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    page = f"{hub}/datasets/{repo}"
    info = _get(f"{hub}/api/datasets/{quote(repo, safe='/')}", headers, deadline)
    if info.status in (401, 403, 404):
        if token:
            return (
                f"is not on the Hub or your HF_TOKEN cannot see it (HTTP {info.status}): "
                f"check the name and that the token's account can open {page}"
            )
        return (
            f"is not on the Hub, or it is private (HTTP {info.status}): check the name, or "
            f"set HF_TOKEN to a token of an account that can open {page}"
        )
    if info.status != 200:
        return f"could not be checked: the Hub answered HTTP {info.status}"
    gated = _gated(info.body)
    if not gated:
        return None
    if not token:
        return (
            f"is gated: accept its terms at {page} with your Hugging Face account, then set "
            f"HF_TOKEN to a token of that account; {LOCAL_HINT}"
        )
    access = _get(f"{hub}/api/datasets/{quote(repo, safe='/')}/auth-check", headers, deadline)
    if access.status == 200:
        return None
    if access.status == 403:
        return (
            f"is gated and the account of your HF_TOKEN has not been granted access: accept "
            f"its terms at {page}; {LOCAL_HINT}"
        )
    return f"is gated and the Hub refused your HF_TOKEN (HTTP {access.status}): check HF_TOKEN"


def _gated(body: bytes) -> bool:
    try:
        doc = json.loads(body)
    except ValueError:
        return False
    return isinstance(doc, dict) and doc.get("gated") not in (None, False, "false")


def _get(url: str, headers: Mapping[str, str], deadline: float) -> HttpAnswer:
    left = deadline - time.monotonic()
    if left <= 0:
        raise Unreachable(f"no answer within {DATASET_PREFLIGHT_SECONDS:g} s")
    return http_get(url, headers, left)
