"""The page's tabs are a registry: `static/tabs.js` lists every `tab-NAME.js` module, each
module describes one tab (its name, label and hooks), and the server serves them all. Read as
text, so a tab module missing from the registry (a tab that silently never shows), a registry
line naming no module, or a module without its descriptor fails here, without a browser."""

from __future__ import annotations

import re

import pytest

from predictor.web.asgi import STATIC_DIR
from tests.web.conftest import RunningApp

IMPORT = re.compile(r'^import (\w+) from "\./(tab-[a-z0-9-]+\.js)";$', re.M)
TABS = re.compile(r"^export const TABS = \[\n((?:  \w+,\n)*)\];$", re.M)
SECTION = re.compile(r'<section id="view-([a-z0-9-]+)"')
NOT_IN_PAGE_SCRIPTS = (".innerHTML", ".outerHTML", "insertAdjacentHTML", "document.write")


def tab_modules() -> dict[str, str]:
    """`tab-NAME.js` -> its text, for every tab module in static/."""
    return {path.name: path.read_text() for path in sorted(STATIC_DIR.glob("tab-*.js"))}


def registry() -> tuple[dict[str, str], list[str]]:
    """tabs.js: imported name -> module file, and the TABS array's entries in order."""
    text = (STATIC_DIR / "tabs.js").read_text()
    imports = {name: module for name, module in IMPORT.findall(text)}
    listed = TABS.search(text)
    assert listed, "tabs.js: no `export const TABS = [` with one entry per line"
    return imports, re.findall(r"\w+", listed.group(1))


def tab_name(module: str) -> str:
    return module.removeprefix("tab-").removesuffix(".js")


def test_tabs_js_lists_every_tab_module_once() -> None:
    imports, entries = registry()
    assert sorted(imports.values()) == sorted(tab_modules()), "a tab-*.js not in tabs.js"
    assert sorted(entries) == sorted(imports), "an import of tabs.js not in TABS, or twice"
    assert entries[0] == "predict"  # the page's default tab


@pytest.mark.parametrize("module", sorted(tab_modules()))
def test_each_tab_module_exports_its_descriptor(module: str) -> None:
    text = tab_modules()[module]
    assert text.count("export default {") == 1, f"{module}: one descriptor, the default export"
    descriptor = text[text.index("export default {") :]
    assert re.search(rf'^  name: "{re.escape(tab_name(module))}",$', descriptor, re.M), (
        f'{module}: name: "{tab_name(module)}" (the file is tab-NAME.js)'
    )
    assert re.search(r'^  label: "[^"]+",$', descriptor, re.M), f"{module}: no label"


def test_every_tab_has_a_section_and_every_section_a_tab() -> None:
    """A tab's section is index.html's or one its section() builds; index.html has no buttons
    of its own (app.js makes one per registered tab)."""
    html = (STATIC_DIR / "index.html").read_text()
    names = {tab_name(module) for module in tab_modules()}
    in_page = set(SECTION.findall(html))
    assert in_page <= names, f"sections of no tab: {in_page - names}"
    for module, text in tab_modules().items():
        if tab_name(module) not in in_page:
            assert re.search(r"^  section(\(\)|:)", text, re.M), f"{module}: no section"
    assert "data-view" not in html


def test_every_page_script_builds_nodes_not_markup() -> None:
    """Every module the page loads (the tab modules too) builds the DOM through dom.js."""
    scripts = sorted(STATIC_DIR.glob("*.js"))
    assert {"app.js", "tabs.js", "dom.js"} <= {path.name for path in scripts}
    for path in scripts:
        script = path.read_text()
        for word in NOT_IN_PAGE_SCRIPTS:
            assert word not in script, f"{path.name}: {word}"
        assert "eval(" not in script and "new Function" not in script, path.name
        local = script.replace("http://www.w3.org/2000/svg", "")  # a namespace, not a fetch
        assert "http://" not in local and "https://" not in local, path.name


def test_the_server_serves_the_registry_and_every_tab_module(app: RunningApp) -> None:
    for name in ["tabs.js", *tab_modules()]:
        answer = app.get(f"/static/{name}")
        assert answer.status == 200, name
        assert answer.headers["Content-Type"] == "text/javascript; charset=utf-8"
        assert answer.body == (STATIC_DIR / name).read_bytes()
