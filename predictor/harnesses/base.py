"""`Harness`: everything benchpress knows about one tool that runs probe benchmarks
(lm-evaluation-harness, Inspect), in one place.

A descriptor says how the tool is named (`benchpress run --harness NAME`, `benchpress probes
--runnable NAME`, the API's `harness=` and `runnable=`), what must be installed to run it, the
model types it takes, which of its tasks runs which benchmark, and which probe sets of a
snapshot are chosen for it (`predictor.trust.probe_sets`). What it takes to run a task is the
tool class's (`tool`, a `predictor.harnesses.tool.ProbeTool`), defined beside the descriptor in
the harness's module: both sit below the probe selection and the plan, which read them, and
the class imports its tool's own package only when it runs a task.

The task map of a harness is the reviewed table of its results format
(`predictor/results/maps/<id>.csv`, ranked by `predictor.results.runnable.preferred_tasks`)
unless the descriptor gives its own (`task_map`); its task facts (items, shots, tokens per
item) are the rows of `predictor/results/facts/tasks.csv` whose `tool` is its id."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.util import find_spec
from typing import TYPE_CHECKING

from predictor.harnesses.tool import ProbeTool
from predictor.util.extras import MissingExtraError, install_hint

if TYPE_CHECKING:
    from predictor.results.task_facts import TaskFacts


@dataclass(frozen=True)
class Harness:
    """One probe-running tool (module docstring); `tool` is the class that runs its tasks."""

    id: str  # "lm_eval": the API's name, the plan's `harness`, its map and facts key
    name: str  # "lm-eval": the command line's `--harness` / `--runnable` choice
    label: str  # "lm-eval": how the plan, the tables and the page name it
    title: str  # "lm-evaluation-harness": the tool's full name, in help texts
    package: str  # the module that must be importable to run a task ("lm_eval")
    extra: str  # the pip extra that installs it ("lm-eval")
    tool: type[ProbeTool]
    model_types: tuple[str, ...] = ()  # examples the `--model-type` help names
    aliases: tuple[str, ...] = ()  # other spellings accepted for the name
    # the probe set chosen for a chat endpoint (generative tasks only); None: the tool's
    # tasks all generate, so one set serves every model type
    chat_probe_set: str | None = None
    # Inspect: a task runs by its registry name (`inspect_evals/gpqa_diamond`); a bare name
    # in the map (a task known from a results file) has nothing to run it by
    registry_names_only: bool = False
    # benchmark -> task, for a harness without a reviewed map table of its own
    task_map: Mapping[str, str] | None = field(default=None, hash=False)

    @property
    def probe_set(self) -> str:
        """The key of the harness's default probe set (`ProbeSet.runnable_sets`)."""
        return self.id

    @property
    def probe_sets(self) -> tuple[tuple[str, bool], ...]:
        """(probe-set key, for a chat endpoint) of every set chosen for this harness."""
        chat = () if self.chat_probe_set is None else ((self.chat_probe_set, True),)
        return ((self.probe_set, False), *chat)

    def probe_set_for(self, chat: bool) -> str:
        """The probe-set key `benchpress run` uses on a chat (or another) endpoint."""
        return self.chat_probe_set if chat and self.chat_probe_set else self.probe_set

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every name the harness is known by, as typed (compared lower-cased)."""
        return tuple(dict.fromkeys((self.id, self.name, *self.aliases)))

    @property
    def task_column(self) -> str:
        """The column naming its task in probe and what-to-run-next tables (`lm_eval_task`)."""
        return f"{self.id}_task"

    def tasks(self, chat: bool = False) -> dict[str, str]:
        """benchmark -> the task of this tool that scores it (`chat`: among the tasks that
        only generate, what a chat endpoint can run), runnable by name or not."""
        if self.task_map is not None:
            return dict(self.task_map)
        # deferred: the maps load Polars' results package; `run --help` reads descriptors only
        from predictor.results.runnable import preferred_tasks

        return preferred_tasks(self.id, generative_only=chat)

    def runs_by_name(self, task: str) -> bool:
        """Whether the tool can run `task` by its name alone (see `registry_names_only`)."""
        return not self.registry_names_only or "/" in task

    def runnable_tasks(self, chat: bool = False) -> dict[str, str]:
        """benchmark -> task, of the tasks `benchpress run` can run by name."""
        return {b: t for b, t in self.tasks(chat).items() if self.runs_by_name(t)}

    def facts(self, task: str) -> TaskFacts | None:
        """Items, shots and tokens per item of a task (None: not in the facts table)."""
        from predictor.results.task_facts import task_facts  # deferred: as in `tasks`

        return task_facts(self.id, task)

    def runs_model_code(self, task: str) -> bool:
        """Whether scoring the task executes the model's code (never chosen as a probe)."""
        from predictor.results.task_facts import runs_model_code  # deferred: as in `tasks`

        return runs_model_code(self.id, task)

    def note(self, task: str) -> str:
        """What the reviewed map says differs from the matrix's scores, '' when nothing."""
        if self.task_map is not None:
            return ""
        from predictor.results.mapping import load_map  # deferred: as in `tasks`

        entries = load_map(self.id).get(task, [])
        return next((e.note for e in entries if e.note), "")

    def installed(self) -> bool:
        try:
            return find_spec(self.package) is not None
        except (ImportError, ValueError):  # a parent package missing, or blocked
            return False

    def require(self, what: str) -> None:
        """`MissingExtraError` naming the extra to install unless the tool is installed."""
        if not self.installed():
            raise MissingExtraError(
                f"{what} needs the `{self.extra}` extra ({self.package} is missing): "
                f"{install_hint(self.extra)}"
            )
