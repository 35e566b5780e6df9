"""A new tab is its own module and one registry entry: a toy `tab-toy.js` added to a copy of
static/ with an import and an entry in tabs.js, and nothing else (index.html unchanged), gets
its button, its section, its place in the link and every hook, in headless Chromium."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from predictor.util.paths import bundled_snapshot_dir
from predictor.web import asgi
from predictor.web.asgi import STATIC_DIR
from predictor.web.catalog import Catalog
from tests.web.conftest import CHROMIUM_FLAGS, RunningApp, open_page, start_app, wait

pytestmark = pytest.mark.browser

TABS_BEFORE = ["Predict", "Pick probes", "Compare models", "New benchmark", "Matrix", "Fit", "Runs"]
HOOKS = {
    "section",
    "init",
    "readUrl",
    "query",
    "start",
    "show",
    "versionChanged",
    "snapshotLoaded",
    "levelChanged",
    "resized",
}

TOY_TAB = """\
// A toy tab: each hook notes that it ran (and with what) in the tab's own section.
import { el, byId } from "./dom.js";

let value = "";
const calls = [];

function note(call) {
  calls.push(call);
  byId("toy-calls").textContent = calls.join(" ");
}

export default {
  name: "toy",
  label: "Toy",
  section: () => [el("h2", { text: "A toy tab" }), el("p", { id: "toy-calls" })],
  init(page) {
    note(`init:${typeof page.updateUrl}`);
  },
  readUrl(params, active) {
    value = params.get("toy") || "";
    note(`readUrl:${value}:${active}`);
  },
  query: (active) => (active ? { toy: value } : {}),
  start: () => note("start"),
  show: () => note("show"),
  versionChanged: () => note("versionChanged"),
  snapshotLoaded: () => note("snapshotLoaded"),
  levelChanged: (active) => note(`level:${active}`),
  resized: () => note("resized"),
};
"""


def register_toy(static: Path) -> None:
    """What a contributor adds: the module, and its import and entry in tabs.js."""
    (static / "tab-toy.js").write_text(TOY_TAB)
    registry = static / "tabs.js"
    text = registry.read_text()
    assert text.count("\n];\n") == 1
    text = text.replace("\n];\n", "\n  toy,\n];\n")
    registry.write_text(
        text.replace("\nexport const", 'import toy from "./tab-toy.js";\n\nexport const')
    )


@pytest.fixture(scope="module")
def toy_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    """The app serving a copy of static/ with the toy tab registered."""
    root = tmp_path_factory.mktemp("toy-tab")
    static = root / "static"
    shutil.copytree(STATIC_DIR, static)
    register_toy(static)
    assert (static / "index.html").read_bytes() == (STATIC_DIR / "index.html").read_bytes()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(asgi, "load_static", partial(asgi.load_static, static))
        running = start_app(Catalog(stores=[bundled_snapshot_dir()], home=root / "home"))
    try:
        yield running
    finally:
        running.stop()


def calls(driver: Any) -> str:
    """What the toy's hooks noted (read while its section is hidden too)."""
    return driver.find_element("id", "toy-calls").get_attribute("textContent")


def query(driver: Any) -> dict[str, list[str]]:
    return parse_qs(urlsplit(driver.current_url).query)


def shown_sections(driver: Any) -> list[str]:
    sections = driver.find_elements("css selector", "main > section.view")
    return [s.get_attribute("id") for s in sections if s.is_displayed()]


def click_tab(driver: Any, name: str) -> None:
    driver.find_element("css selector", f'#tabs button[data-view="{name}"]').click()


def test_a_registered_tab_gets_its_button_section_link_and_hooks(
    browser: Any, toy_app: RunningApp
) -> None:
    open_page(browser, toy_app.url + "/?view=toy&toy=hello&scores=gpqa_diamond=80")
    buttons = browser.find_elements("css selector", "#tabs button")
    assert [b.text for b in buttons] == [*TABS_BEFORE, "Toy"]
    assert buttons[-1].get_attribute("data-view") == "toy"
    assert buttons[-1].get_attribute("aria-current") == "page"
    assert shown_sections(browser) == ["view-toy"]
    section = browser.find_element("id", "view-toy")
    assert section.get_attribute("aria-label") == "Toy"
    assert section.find_element("css selector", "h2").text == "A toy tab"
    assert calls(browser) == "init:function readUrl:hello:true start show"
    link = query(browser)
    assert link["view"] == ["toy"] and link["toy"] == ["hello"]
    assert link["scores"] == ["gpqa_diamond=80"]  # the Predict tab's inputs stay in every link

    click_tab(browser, "predict")
    wait(browser, lambda d: "toy" not in query(d), "the toy's parameter leaves the link")
    assert shown_sections(browser) == ["view-predict"]
    assert query(browser)["scores"] == ["gpqa_diamond=80"]
    click_tab(browser, "toy")
    wait(browser, lambda d: query(d).get("toy") == ["hello"], "and comes back with the tab")
    assert calls(browser).endswith("start show show")

    browser.execute_script(
        "const s = document.getElementById('level'); s.value = '0.8';"
        "s.dispatchEvent(new Event('change'));"
    )
    wait(browser, lambda d: calls(d).endswith("level:true"), "the level reaches the tab")
    browser.execute_script("document.getElementById('version').dispatchEvent(new Event('change'));")
    wait(
        browser,
        lambda d: calls(d).endswith("versionChanged snapshotLoaded show"),
        "a snapshot change reaches the tab, which is shown again",
    )
    try:
        browser.set_window_size(1200, 900)
        wait(browser, lambda d: calls(d).endswith("resized"), "a resize reaches the tab shown")
    finally:
        browser.set_window_size(*(int(v) for v in CHROMIUM_FLAGS[-1].split("=")[1].split(",")))


def test_a_tab_not_shown_reads_the_link_but_stays_out_of_it(
    browser: Any, toy_app: RunningApp
) -> None:
    open_page(browser, toy_app.url + "/?view=fit&toy=ignored")
    assert shown_sections(browser) == ["view-fit"]
    assert "readUrl:ignored:false" in calls(browser)
    assert "show" not in calls(browser).split()
    assert query(browser) == {"view": ["fit"]}


def test_every_registered_tab_has_the_descriptor_shape(browser: Any, toy_app: RunningApp) -> None:
    """Each descriptor of the page's registry: a name and label, and only hooks the page calls
    (a misspelt hook would never run)."""
    open_page(browser, toy_app.url + "/")
    tabs = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "import('/static/tabs.js').then(({ TABS }) => done(TABS.map((t) => ({"
        "  name: t.name, label: t.label, keys: Object.keys(t),"
        "  hooks: Object.keys(t).filter((k) => typeof t[k] === 'function'),"
        "})))).catch((e) => done(String(e)));"
    )
    assert [t["label"] for t in tabs] == [*TABS_BEFORE, "Toy"]
    assert len({t["name"] for t in tabs}) == len(tabs)
    for tab in tabs:
        assert set(tab["keys"]) == {"name", "label", *tab["hooks"]}, tab
        assert set(tab["hooks"]) <= HOOKS, tab
