"""Which optional extra installs which package, and the one line that says so.

`pip install benchpress-llm` installs the predictor alone; a command that needs more (the
private store's DuckDB, the web page's server, lm-eval, ...) says which extra to install
instead of ending in a `ModuleNotFoundError` traceback (exit 2, `predictor.cli.main`).
The table follows `[project.optional-dependencies]` in pyproject.toml (a test keeps them
in step); where several extras hold a package, the smallest is named.
"""

from __future__ import annotations

from importlib.util import find_spec

# importable top-level module -> the extra that installs it
EXTRA_OF: dict[str, str] = {
    "dagster": "pipeline",
    "dagster_webserver": "pipeline",
    "duckdb": "pipeline",
    "requests": "pipeline",
    "yaml": "pipeline",
    "matplotlib": "pipeline",
    "re2": "pipeline",
    "starlette": "web",
    "uvicorn": "web",
    "inspect_ai": "inspect",
    "openai": "inspect",  # the client of Inspect's OpenAI-compatible providers
    "lm_eval": "lm-eval",
    "obstore": "s3",
    "mlflow": "mlflow",
    "sqlalchemy": "mlflow",
    "alembic": "mlflow",
    "wandb": "wandb",
    "dagster_postgres": "team",
    "dagster_k8s": "team",
    "psycopg2": "team",
}


class MissingExtraError(ValueError):
    """What was asked needs an optional extra that is not installed; the message says which
    and how to install it (`benchpress` prints it as one line and exits 2)."""


def install_hint(extra: str) -> str:
    return f"pip install 'benchpress-llm[{extra}]'"


def missing_extra(exc: BaseException, what: str) -> MissingExtraError | None:
    """`exc` as a MissingExtraError saying that `what` needs the extra of the missing module,
    or None when `exc` is not an extra's package missing (a bug, whose traceback is shown)."""
    if not isinstance(exc, ImportError) or not exc.name:
        return None
    module = exc.name.partition(".")[0]
    extra = EXTRA_OF.get(module)
    if extra is None:
        return None
    return MissingExtraError(
        f"{what} needs the `{extra}` extra ({module} is missing): {install_hint(extra)}"
    )


def require(module: str, what: str) -> None:
    """Raise the MissingExtraError of `module` for `what` unless it is installed: checked
    before a command prints or writes anything (not only when it first imports `module`)."""
    if find_spec(module) is None:
        error = missing_extra(ModuleNotFoundError(name=module), what)
        raise error or ModuleNotFoundError(f"No module named {module!r}", name=module)
