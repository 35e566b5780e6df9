"""`pip install benchpress-llm` without extras: every command `benchpress --help` lists ends in
a result or in one line naming the extra to install (exit 2), and private models the home
holds are simply absent when DuckDB cannot read their store.

The test venv has every extra installed, so each run is a subprocess in which the extras'
packages cannot be imported: before `benchpress` starts, `sys.modules[name] = None` for every
package of `predictor.util.extras.EXTRA_OF` (duckdb, dagster, requests, yaml, starlette, uvicorn,
lm_eval, ...), which makes `import duckdb` raise ModuleNotFoundError and
`importlib.util.find_spec("duckdb")` answer None, as in a venv without them. The wheel itself,
installed without extras in a fresh venv, was checked by hand (see the report of this change).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from predictor.util.extras import EXTRA_OF
from tests.support.shared_home import subprocess_environment

REPO_ROOT = Path(__file__).resolve().parents[2]
BLOCK = f"import sys\nfor _name in {sorted(EXTRA_OF)!r}:\n    sys.modules[_name] = None\n"
CLI = BLOCK + "from predictor.cli import main\nsys.exit(main(sys.argv[1:]))\n"
# the article's snippet (README): "gpt-5-5" is not a snapshot name as written, so the lookup
# also reads the private store's names
SNIPPET = """
from benchpress import BenchPress
bp = BenchPress.from_pretrained("microsoft/benchpress-v1")
predictions = bp.predict({"mmlu": 78.3, "gsm8k": 85.1, "humaneval": 72.4,
                          "arc_challenge": 81.9, "hellaswag": 89.2})
print(bp.compare_with_known_models(predictions, reference_models=["claude-fable-5", "gpt-5-5"])
      .summary())
"""
PIPELINE = "pip install 'benchpress-llm[pipeline]'"


def without_extras(code: str, args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=home.parent,
        env=subprocess_environment(BENCHPRESS_HOME=str(home)),
        timeout=300,
    )


@pytest.fixture
def scores_file(tmp_path: Path) -> Path:
    path = tmp_path / "scores.csv"
    path.write_text("model,benchmark,score\nmy-ft,gpqa_diamond,70\nmy-ft,mmlu_pro,75\n")
    return path


@pytest.fixture
def private_home(tmp_path: Path, scores_file: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose private store was made with the extras (this process has them)."""
    from predictor.cli import main

    home = tmp_path / "private-home"
    monkeypatch.setenv("BENCHPRESS_HOME", str(home))
    assert main(["models", "add", "my-ft", "--from", str(scores_file)]) == 0
    return home


def test_help_lists_every_command_the_pipelines_too(tmp_path: Path) -> None:
    """Every command is listed; those needing an extra say so when chosen (below)."""
    done = without_extras(CLI, ["--help"], tmp_path / "home")
    assert (done.returncode, done.stderr) == (0, "")
    listed = {line.split()[0] for line in done.stdout.splitlines() if line.startswith("    ")}
    assert {"predict", "app", "models", "track", "refresh", "sources", "warehouse"} <= listed


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["models", "list"], f"`benchpress models` needs the `pipeline` extra (duckdb is missing): {PIPELINE}"),  # noqa: E501
        (["models", "add", "x", "--from", "SCORES"], f"`benchpress models` needs the `pipeline` extra (duckdb is missing): {PIPELINE}"),  # noqa: E501
        (["models", "show", "my-ft"], f"`benchpress models` needs the `pipeline` extra (duckdb is missing): {PIPELINE}"),  # noqa: E501
        (["models", "remove", "my-ft"], f"`benchpress models` needs the `pipeline` extra (duckdb is missing): {PIPELINE}"),  # noqa: E501
        (["track", "run", "--from", "SCORES"], f"`benchpress track` needs the `pipeline` extra (duckdb is missing): {PIPELINE}"),  # noqa: E501
        (["refresh", "--mode", "replay"], f"`benchpress refresh` needs the `pipeline` extra (dagster is missing): {PIPELINE}"),  # noqa: E501
        (["sources"], f"`benchpress sources` needs the `pipeline` extra (requests is missing): {PIPELINE}"),  # noqa: E501
        (["warehouse", "stats"], f"`benchpress warehouse` needs the `pipeline` extra (requests is missing): {PIPELINE}"),  # noqa: E501
        (["app", "--port", "0"], "the web page needs the `web` extra (starlette is missing): pip install 'benchpress-llm[web]'"),  # noqa: E501
        (["snapshots", "list", "--store", "s3://bucket/x"], "s3:// snapshot stores need the optional dependency obstore: pip install 'benchpress-llm[s3]'"),  # noqa: E501
        (["run", "my-model", "--harness", "inspect", "--model-type", "mockllm/model"], "`benchpress run` needs the `inspect` extra (inspect_ai is missing): pip install 'benchpress-llm[inspect]'"),  # noqa: E501
        (["run", "my-model", "--model-type", "dummy"], "`benchpress run` needs the `lm-eval` extra (lm_eval is missing): pip install 'benchpress-llm[lm-eval]'"),  # noqa: E501
    ],
)  # fmt: skip
def test_a_command_that_needs_an_extra_says_which_in_one_line(
    private_home: Path, scores_file: Path, args: list[str], message: str
) -> None:
    args = [str(scores_file) if a == "SCORES" else a for a in args]
    done = without_extras(CLI, args, private_home)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"benchpress: error: {message}\n")


def test_a_command_without_extra_needs_still_answers(private_home: Path) -> None:
    done = without_extras(CLI, ["predict", "--scores", "gpqa_diamond=80", "--json"], private_home)
    assert (done.returncode, done.stderr) == (0, "")
    assert '"gpqa_diamond"' in done.stdout


def test_the_article_snippet_runs_beside_a_private_store_it_cannot_read(
    private_home: Path, tmp_path: Path
) -> None:
    """The private models are absent: the answer is the one of a home without any."""
    done = without_extras(BLOCK + SNIPPET, [], private_home)
    plain = without_extras(BLOCK + SNIPPET, [], tmp_path / "plain-home")
    assert (done.returncode, done.stdout, done.stderr) == (0, plain.stdout, plain.stderr)
    assert "vs gpt-5.5 (" in done.stdout


def test_the_extras_table_follows_pyproject() -> None:
    """Each module of `EXTRA_OF` is installed by a distribution its extra lists (the test venv
    has every extra, so each module's distribution is known)."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    distributions = packages_distributions()

    def listed(requirement: str) -> str:
        name = requirement.split(";")[0]
        for mark in "[<>=!~ ":
            name = name.split(mark)[0]
        return name.strip().lower().replace("_", "-")

    for module, extra in EXTRA_OF.items():
        provided_by = {d.lower().replace("_", "-") for d in distributions.get(module, [])}
        assert provided_by, f"{module} is not installed in the test venv"
        assert provided_by & {listed(r) for r in extras[extra]}, (module, extra)
