"""The documentation a user reads: the site builds with `mkdocs build --strict` (a broken link,
a missing page, an undocumented command or an unrenderable docstring fails), the README's
links resolve, and the README's Python example prints what the README shows."""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
HOOK = ROOT / "docs" / "hooks" / "cli_help.py"
KEY_PAGES = [
    "index.html",
    "getting-started.html",
    "python-api.html",
    "eval-results.html",
    "web.html",
    "cli.html",
    "api/benchpress.html",
    "api/completion.html",
    "api/trust.html",
    "api/results.html",
    "snapshots.html",
    "publish-gate.html",
    "matrix-policy.html",
    "method.html",
    "sources.html",
    "pipeline.html",
    "operations.html",
    "contributing.html",
    "changelog.html",
    "assets/web-page.png",
    "assets/figures/calibration.svg",  # the method page's plots (docs/hooks/figures.py)
    "assets/figures/peers.svg",
    "assets/figures/probes.svg",
    "assets/figures/future.svg",
]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def build_site(out: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)]
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, env=env, timeout=600, check=False
    )


@pytest.mark.slow
def test_site_builds_strict_with_every_page(tmp_path, benchpress_home) -> None:
    site = tmp_path / "site"
    done = build_site(site)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    missing = [page for page in KEY_PAGES if not (site / page).is_file()]
    assert missing == []

    # the API reference is generated from the docstrings
    api = (site / "api" / "benchpress.html").read_text()
    for anchor in ("predictor.api.BenchPress.load", "predictor.api.BenchPress.predict"):
        assert f'id="{anchor}"' in api
    completion = (site / "api/completion.html").read_text()
    assert 'id="predictor.fit.completion.complete_matrix"' in completion
    assert 'id="predictor.trust.probes.select_probes"' in (site / "api/trust.html").read_text()

    # the CLI reference carries each command's --help from the installed parser
    cli = (site / "cli.html").read_text()
    for command in ("predict", "snapshots verify", "refresh", "warehouse rebuild"):
        assert f"usage: benchpress {command}" in cli
    # CONTRIBUTING.md and CHANGELOG.md are included, not copied
    assert "Add a leaderboard source" in (site / "contributing.html").read_text()
    assert "0.1.0 (unreleased)" in (site / "changelog.html").read_text()
    # every source keeps its licence
    sources = (site / "sources.html").read_text()
    assert "CC BY-NC 4.0" in sources and "CDLA-Permissive-2.0" in sources

    # offline: no stylesheet, script or font from the internet
    for page in site.rglob("*.html"):
        text = page.read_text()
        assert not re.search(r"<(script|link)[^>]+(src|href)=\"https?://", text), page
        assert "fonts.googleapis" not in text, page


def load_hook():
    spec = importlib.util.spec_from_file_location("cli_help_hook", HOOK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page(name: str = "cli.md") -> SimpleNamespace:
    return SimpleNamespace(file=SimpleNamespace(src_uri=name))


def test_cli_hook_prints_help_and_flags_undocumented_commands(caplog) -> None:
    hook = load_hook()
    markdown = "# CLI\n\n<!-- cli-help: snapshots verify -->\n\n<!-- cli-help: no such -->\n"
    with caplog.at_level(logging.INFO, logger="mkdocs.hooks.cli_help"):
        out = hook.on_page_markdown(markdown, page(), None, None)
    assert "```text\nusage: benchpress snapshots verify" in out
    assert "`benchpress no such` is not installed here" in out
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    # every other command is undocumented on this page: one warning each, naming it
    assert "cli_help: cli.md documents no `benchpress predict`" in warned
    assert "cli_help: cli.md documents no `benchpress warehouse rebuild`" in warned
    assert not any("snapshots verify" in message for message in warned)


def test_cli_page_documents_every_command(caplog) -> None:
    hook = load_hook()
    markdown = (ROOT / "docs" / "cli.md").read_text()
    with caplog.at_level(logging.WARNING, logger="mkdocs.hooks.cli_help"):
        hook.on_page_markdown(markdown, page(), None, None)
    assert [r.getMessage() for r in caplog.records] == []


def test_readme_links_resolve_and_keep_the_contract() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    assert "make demo" in text and "make test" in text
    assert not re.search(r"goal *(<=|>=|met)|not met|not reached", text, re.IGNORECASE)
    relative = [t for t in LINK.findall(text) if not re.match(r"[a-z]+://", t)]
    assert "docs/getting-started.md" in relative
    broken = [t for t in relative if not (ROOT / t.split("#")[0]).exists()]
    assert broken == []
    assert (ROOT / "docs/assets/web-page.png").stat().st_size < 300_000


def readme_block(after: str, kind: str) -> str:
    text = README.read_text()
    start = text.index(f"```{kind}\n", text.index(after)) + len(kind) + 4
    return text[start : text.index("```", start)]


def test_readme_python_example_prints_what_the_readme_shows(benchpress_home) -> None:
    code = readme_block("## In Python", "python")
    shown = readme_block("## In Python", "text")
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "BENCHPRESS_HOME": str(benchpress_home)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == shown
