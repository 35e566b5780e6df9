// BenchPress web page: the shell around the tabs listed in tabs.js (each one a tab-NAME.js
// module). It makes the tab buttons, keeps the URL in step with the page (the settings every
// tab shares, then each tab's own), loads the snapshot versions and the chosen snapshot, and
// switches tabs. Talks only to this server's JSON API; builds every node with dom.js
// (textContent).

import { el, clear, byId, debounce, showError, pct } from "./dom.js";
import { getJSON } from "./api.js";
import { TABS } from "./tabs.js";

const DEFAULT_LEVEL = 0.9;
// the interval levels the API serves (predictor/methods/common.py MIN_LEVEL, MAX_LEVEL)
const MIN_LEVEL = 0.01;
const MAX_LEVEL = 0.999;

const state = {
  view: TABS[0].name,
  version: "", // "" = latest
  pinned: false, // the version goes into shared links
  level: DEFAULT_LEVEL,
  private: [], // /api/private: the team's own models, offered beside the snapshot's
  snapshot: null, // /api/snapshot answer
  benchmarks: new Map(), // benchmark id -> the snapshot's row (name, scale, unit, probe, ...)
  models: new Map(), // model id -> the snapshot's row
};

/** What every tab's init() is handed: the shared state (read only) and the page's actions. */
const page = {
  state,
  version: versionParam, // the version parameter of API calls (undefined = latest)
  updateUrl, // the tab's inputs changed: put them in the link
  showView, // switch to the tab of that name (returns when it is shown)
  loadPrivate, // re-read the team's private models (`models add` may have run)
  toolLabel, // the tool that wrote a results file, as people call it
};

// ------------------------------------------------------------------------------ helpers
function versionParam() {
  return state.version || undefined;
}

/** Query string with ',', '=' and ':' left readable (`scores=gpqa_diamond=80,hle=20`). */
function buildQuery(params) {
  const parts = [];
  for (const [key, value] of Object.entries(params)) {
    if (value === null || value === undefined || value === "") continue;
    const encoded = encodeURIComponent(String(value))
      .replace(/%2C/gi, ",")
      .replace(/%3D/gi, "=")
      .replace(/%3A/gi, ":");
    parts.push(`${encodeURIComponent(key)}=${encoded}`);
  }
  return parts.length ? `?${parts.join("&")}` : "";
}

// ------------------------------------------------------------------------------ the URL
/** The tab shown. */
function tabShown() {
  return TABS.find((tab) => tab.name === state.view);
}

function readUrl() {
  const params = new URLSearchParams(window.location.search);
  const view = params.get("view");
  state.view = TABS.some((tab) => tab.name === view) ? view : TABS[0].name;
  state.version = params.get("version") || "";
  state.pinned = Boolean(state.version);
  const level = Number(params.get("level"));
  const served = level >= MIN_LEVEL && level <= MAX_LEVEL;
  state.level = params.get("level") && served ? level : DEFAULT_LEVEL;
  for (const tab of TABS) tab.readUrl?.(params, tab.name === state.view);
}

function currentQuery() {
  const params = {
    view: state.view === TABS[0].name ? null : state.view,
    version: state.pinned ? state.version : null,
    level: state.level === DEFAULT_LEVEL ? null : state.level,
  };
  for (const tab of TABS) Object.assign(params, tab.query?.(tab.name === state.view));
  return buildQuery(params);
}

function updateUrl() {
  const query = currentQuery();
  const path = `${window.location.pathname}${query}`;
  if (path !== `${window.location.pathname}${window.location.search}`) {
    window.history.replaceState(null, "", path);
  }
  for (const link of document.querySelectorAll("a[data-share]")) {
    link.href = path;
    link.textContent = `${window.location.origin}${path}`;
  }
}

// --------------------------------------------------------------------- versions, snapshot
async function loadVersions() {
  const answer = await getJSON("/api/versions");
  const select = clear(byId("version"));
  for (const v of answer.versions) {
    const latest = v.version === answer.latest ? " (latest)" : "";
    select.append(
      el("option", {
        value: v.version,
        text: `${v.version}${latest}`,
        title: `${v.models} models · ${v.benchmarks} benchmarks · ${v.cells} cells · published ${v.published_at}`,
      }),
    );
  }
  if (state.version && !answer.versions.some((v) => v.version === state.version)) {
    select.append(el("option", { value: state.version, text: `${state.version} (not found)` }));
  }
  select.value = state.version || answer.latest || "";
}

async function loadSnapshot() {
  const snap = await getJSON("/api/snapshot", { version: versionParam() });
  state.snapshot = snap;
  state.benchmarks = new Map(snap.benchmarks.map((b) => [b.benchmark_id, b]));
  state.models = new Map(snap.models.map((m) => [m.model_id, m]));
  const probeList = clear(byId("benchmark-list"));
  const allList = clear(byId("benchmark-list-all"));
  for (const b of snap.benchmarks) {
    const option = () => el("option", { value: b.benchmark_id, label: b.name });
    if (b.probe) probeList.append(option());
    allList.append(option());
  }
  fillModelList();
  byId("footer-version").textContent =
    `snapshot ${snap.version} · ${snap.models.length} models · ${snap.benchmarks.length} ` +
    `benchmarks · ${snap.manifest.counts?.cells ?? "?"} observed cells`;
}

/** The known-model pickers' list: the snapshot's models, then the team's private ones. */
function fillModelList() {
  const list = clear(byId("model-list"));
  for (const m of state.models.values()) {
    list.append(el("option", { value: m.model_id, label: m.name }));
  }
  for (const m of state.private) {
    const where = m.run === null ? "" : ` · run ${m.run}, step ${m.step ?? "?"}`;
    list.append(el("option", { value: m.model_id, label: `private${where}` }));
  }
}

/** The team's private models (re-read when a picker is shown: `models add` may have run). */
async function loadPrivate() {
  try {
    const answer = await getJSON("/api/private");
    state.private = answer.models;
    fillModelList();
  } catch (error) {
    showError("error", `private models: ${error.message}`);
  }
}

// ------------------------------------------------------------------------ results files
let formatLabels = {}; // format id -> its name: GET /api/results `labels` (the server's registry)

/** The results formats' names, as the server's registry of formats gives them. */
async function loadFormats() {
  const formats = await getJSON("/api/results");
  formatLabels = formats.labels;
  // the file picker offers what the server reads (index.html's list is the no-script default)
  const picker = document.getElementById("results-file");
  if (picker && formats.accept?.length) picker.accept = formats.accept.join(",");
}

/** The tool that wrote a results file, as people call it: the format's name (EEE names the
 * source it was converted from too), else what the file said. Always a string. */
function toolLabel(format, tool) {
  const name = formatLabels[format];
  if (!name) return String(tool || format || "");
  return format === "eee" && tool ? `${name}: ${tool}` : name;
}

// --------------------------------------------------------------------------------- tabs
/** A button per tab, in the registry's order, and a section for each tab whose section is
 * not in index.html (its section() builds the content). */
function mountTabs() {
  const main = document.querySelector("main");
  for (const tab of TABS) {
    const button = el("button", { type: "button", dataset: { view: tab.name }, text: tab.label });
    button.addEventListener("click", () => showView(tab.name));
    byId("tabs").append(button);
    if (!byId(`view-${tab.name}`)) {
      const props = { id: `view-${tab.name}`, class: "view", "aria-label": tab.label };
      main.append(el("section", { ...props, hidden: true }, tab.section?.() ?? []));
    }
  }
}

function showView(view) {
  state.view = view;
  for (const tab of TABS) byId(`view-${tab.name}`).hidden = tab.name !== view;
  for (const button of document.querySelectorAll("#tabs button")) {
    const active = button.dataset.view === view;
    button.classList.toggle("active", active);
    button.setAttribute("aria-current", active ? "page" : "false");
  }
  updateUrl();
  return renderView();
}

function renderView() {
  return Promise.resolve(tabShown().show?.());
}

async function changeVersion(version) {
  state.version = version;
  state.pinned = true;
  for (const tab of TABS) tab.versionChanged?.();
  try {
    await loadSnapshot();
    showError("error", "");
  } catch (error) {
    showError("error", error.message);
    return;
  }
  for (const tab of TABS) await tab.snapshotLoaded?.();
  await renderView();
}

function bind() {
  byId("version").addEventListener("change", (event) => changeVersion(event.target.value));
  byId("level").addEventListener("change", (event) => {
    state.level = Number(event.target.value);
    for (const tab of TABS) tab.levelChanged?.(tab.name === state.view);
  });
  window.addEventListener("resize", debounce(() => tabShown().resized?.(), 200));
}

function setLevelOption(level) {
  const select = byId("level");
  const value = String(level);
  if (![...select.options].some((o) => o.value === value)) {
    select.append(el("option", { value, text: pct(level) }));
  }
  select.value = value;
}

async function start() {
  mountTabs();
  for (const tab of TABS) tab.init?.(page);
  readUrl();
  bind();
  setLevelOption(state.level);
  try {
    await loadVersions();
    await loadSnapshot();
    await loadPrivate();
    await loadFormats();
  } catch (error) {
    showError("error", error.message);
    document.body.dataset.ready = "error";
    return;
  }
  for (const tab of TABS) await tab.start?.();
  await showView(state.view);
  document.body.dataset.ready = "true";
}

start();
