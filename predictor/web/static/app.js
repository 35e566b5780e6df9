// BenchPress web page: state, URL sync and the seven views (predict, pick probes, compare,
// new benchmark, matrix, fit, runs; the probe picker lives in probes.js, the runs view in
// runs.js, the new-benchmark view in new_benchmark.js).
// Talks only to this server's JSON API; builds every node with dom.js (textContent).

import { el, clear, byId, fmt, scoreText, sourceLink, debounce, chip } from "./dom.js";
import { getJSON, postJSON, postFile } from "./api.js";
import { intervalChart, spectrumChart, scatterChart, legend, PALETTE } from "./charts.js";
import { Heatmap, colour, PREDICTED_FADE } from "./heatmap.js";
import { ProbePicker } from "./probes.js";
import { RunsView } from "./runs.js";
import { NewBenchmarkView } from "./new_benchmark.js";
import { SideInfo, reasonText } from "./side.js";

const VIEWS = ["predict", "probes", "compare", "new-benchmark", "matrix", "fit", "runs"];
const DEFAULT_LEVEL = 0.9;
// the interval levels the API serves (predictor/methods/common.py MIN_LEVEL, MAX_LEVEL)
const MIN_LEVEL = 0.01;
const MAX_LEVEL = 0.999;
const PROBE_COLOR = "#e8590c";
const PREDICTED_COLOR = "#3b5bdb";
const ACTUAL_COLOR = "#212529";
const SUGGESTED_COMPARE_BENCHMARKS = 12;

const state = {
  view: "predict",
  version: "", // "" = latest
  pinned: false, // the version goes into shared links
  level: DEFAULT_LEVEL,
  model: null, // /api/models/<id> answer when the probes came from a known model
  upload: null, // /api/results answer when the probes came from a results file
  uploadFile: null, // that file (kept in the page only, to read another model of it)
  private: [], // /api/private: the team's own models, offered beside the snapshot's
  prediction: null,
  shareProbes: null, // probes of the last successful prediction, for the URL
  sort: { key: "score", dir: -1 },
  filter: "",
  compareModels: [],
  compareBenchmarks: [],
  compareMine: false,
  snapshot: null,
  benchmarks: new Map(),
  models: new Map(),
  matrix: null,
  heatmap: null,
  cell: null,
  plots: null,
};

let predictSeq = 0;
let compareSeq = 0;

const picker = new ProbePicker({
  version: () => versionParam(),
  benchmark: (id) => state.benchmarks.get(id),
  onUse: (benchmarks) => usePickedProbes(benchmarks),
  onChange: () => updateUrl(),
});

const runs = new RunsView({
  version: () => versionParam(),
  level: () => state.level,
  benchmark: (id) => state.benchmarks.get(id),
  toolName: toolLabel,
  onChange: () => updateUrl(),
});

const newBenchmark = new NewBenchmarkView({
  version: () => versionParam(),
  level: () => state.level,
  onChange: () => updateUrl(),
});

// the model's name, family, release date and base: chips filled from /api/side
const side = new SideInfo({
  version: () => versionParam(),
  onChange: () => {
    updateUrl();
    schedulePredict();
  },
});

// ------------------------------------------------------------------------------ helpers
function versionParam() {
  return state.version || undefined;
}

function benchmarkName(id) {
  return state.benchmarks.get(id)?.name || id;
}

function showError(id, message) {
  const node = byId(id);
  node.textContent = message || "";
  node.hidden = !message;
}

function pct(level) {
  return `${Math.round(level * 1000) / 10}%`;
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

function parseScoresText(text) {
  const rows = [];
  for (const part of String(text || "").split(",")) {
    if (!part.trim()) continue;
    const at = part.indexOf("=");
    if (at < 0) rows.push({ benchmark: part.trim(), score: "" });
    else rows.push({ benchmark: part.slice(0, at).trim(), score: part.slice(at + 1).trim() });
  }
  return rows;
}

function scoresText(rows) {
  return rows
    .filter((r) => r.benchmark || r.score)
    .map((r) => `${r.benchmark}=${r.score}`)
    .join(",");
}

// ------------------------------------------------------------------------------ the URL
function readUrl() {
  const params = new URLSearchParams(window.location.search);
  const view = params.get("view");
  state.view = VIEWS.includes(view) ? view : "predict";
  state.version = params.get("version") || "";
  state.pinned = Boolean(state.version);
  const level = Number(params.get("level"));
  const served = level >= MIN_LEVEL && level <= MAX_LEVEL;
  state.level = params.get("level") && served ? level : DEFAULT_LEVEL;
  state.compareModels = (params.get("models") || "").split(",").filter(Boolean);
  state.compareBenchmarks = (params.get("benchmarks") || "").split(",").filter(Boolean);
  const cell = (params.get("cell") || "").split(",");
  state.cell =
    cell.length === 2 && cell[0] && cell[1] ? { model: cell[0], benchmark: cell[1] } : null;
  if (state.view === "probes") picker.readUrl(params);
  if (state.view === "runs") runs.readUrl(params);
  if (state.view === "new-benchmark") newBenchmark.readUrl(params);
  side.readUrl(params);
  return {
    scores: params.get("scores"),
    model: params.get("model"),
  };
}

function currentQuery() {
  // after a successful prediction: its canonical ids; otherwise the inputs as typed
  const probes = state.shareProbes || readProbes();
  const params = {
    view: state.view === "predict" ? null : state.view,
    version: state.pinned ? state.version : null,
    level: state.level === DEFAULT_LEVEL ? null : state.level,
    scores: scoresText(probes),
    model: state.model ? state.model.model.model_id : null,
    ...side.query(),
  };
  if (state.view === "compare") {
    params.models = state.compareModels.join(",");
    params.benchmarks = state.compareBenchmarks.join(",");
  }
  if (state.view === "matrix" && state.cell) {
    params.cell = `${state.cell.model},${state.cell.benchmark}`;
  }
  if (state.view === "probes") Object.assign(params, picker.query());
  if (state.view === "runs") Object.assign(params, runs.query());
  if (state.view === "new-benchmark") Object.assign(params, newBenchmark.query());
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

/** A model's name as a picker shows it: private ones say so. */
function modelLabel(m) {
  return m.private ? `${m.name} (private)` : m.name;
}

// ------------------------------------------------------------------------------ probes
function probeRow(benchmark = "", score = "") {
  const remove = el("button", {
    type: "button",
    class: "icon",
    title: "remove this benchmark",
    "aria-label": "remove",
    text: "×",
  });
  const row = el(
    "tr",
    { class: "probe-row" },
    el(
      "td",
      {},
      el("input", {
        class: "probe-benchmark",
        list: "benchmark-list",
        value: benchmark,
        placeholder: "e.g. gpqa_diamond",
        "aria-label": "benchmark",
        spellcheck: "false",
      }),
    ),
    el(
      "td",
      {},
      el("input", {
        class: "probe-score",
        value: score,
        inputmode: "decimal",
        placeholder: "score",
        "aria-label": "score",
      }),
    ),
    el("td", {}, remove),
  );
  remove.addEventListener("click", () => {
    row.remove();
    if (!byId("probe-rows").children.length) byId("probe-rows").append(probeRow());
    syncModelChecks();
    schedulePredict();
  });
  return row;
}

function readProbes() {
  return [...byId("probe-rows").querySelectorAll("tr")].map((tr) => ({
    benchmark: tr.querySelector(".probe-benchmark").value.trim(),
    score: tr.querySelector(".probe-score").value.trim(),
  }));
}

function setProbes(rows) {
  const body = clear(byId("probe-rows"));
  for (const r of rows) body.append(probeRow(r.benchmark, r.score));
  if (!rows.length) body.append(probeRow());
  syncModelChecks();
}

const schedulePredict = debounce(() => runPredict(), 400);

/** The number to send for a row: the known model's own score when the row shows it rounded
 * (59.81 for a stored 59.809999999999995), so the prediction is the one from its data. */
function scoreValue(row) {
  const observed =
    state.model?.scores.find((s) => s.benchmark_id === row.benchmark)?.score ??
    state.upload?.probes.find((p) => p.benchmark === row.benchmark)?.score;
  if (typeof observed === "number" && scoreText(observed) === row.score) return observed;
  const number = Number(row.score);
  return Number.isFinite(number) ? number : row.score;
}

// ------------------------------------------------------------------------------ predict
/** One line saying which family and release date the prediction used and why: the server's
 * own (`SideUsed.describe`), "" when the answer has none. */
function sideText(used) {
  const reason = reasonText(used);
  return reason ? `Side information: ${reason}` : "";
}

async function runPredict() {
  schedulePredict.cancel(); // this run reads the inputs as they are now
  const rows = readProbes().filter((r) => r.benchmark || r.score);
  const scored = rows.filter((r) => r.score); // a benchmark without a score yet waits
  const seq = ++predictSeq;
  state.shareProbes = null;
  showError("predict-warning", ""); // a warning is about the scores it was given with
  if (!scored.length) {
    state.prediction = null;
    showError("predict-error", "");
    side.showPrediction(null);
    renderPrediction();
    updateUrl();
    return;
  }
  const scores = {};
  for (const r of scored) {
    if (!r.benchmark) return fail(`choose a benchmark for the score ${r.score}`);
    if (Object.hasOwn(scores, r.benchmark)) return fail(`scores: '${r.benchmark}' is given twice`);
    scores[r.benchmark] = scoreValue(r);
  }
  byId("predict-button").disabled = true;
  try {
    const answer = await postJSON("/api/predict", {
      scores,
      level: state.level,
      version: versionParam(),
      ...side.params(),
    });
    if (seq !== predictSeq) return;
    state.prediction = answer;
    // canonical ids in the form's order (the API keeps it); waiting rows stay in the link
    const resolved = Object.entries(answer.probes);
    let next = 0;
    state.shareProbes = rows.map((r) => {
      if (!r.score) return { benchmark: r.benchmark, score: "" };
      const [benchmark, value] = resolved[next++] || [r.benchmark, r.score];
      // the number as typed, or as shown when the row holds a model's score (no float tails)
      return { benchmark, score: Number(r.score) === value ? String(value) : r.score };
    });
    showError("predict-error", "");
    showError("predict-warning", (answer.warnings || []).join(" "));
    side.showPrediction(answer.side);
    renderPrediction();
    updateUrl();
  } catch (error) {
    if (seq === predictSeq) fail(error.message);
  } finally {
    if (seq === predictSeq) byId("predict-button").disabled = false;
  }

  function fail(message) {
    showError("predict-error", message);
    byId("predict-summary").textContent = "Fix the scores to update the prediction.";
    byId("prediction-table").classList.add("stale");
    byId("predict-chart").classList.add("stale");
    updateUrl();
  }
}

/** Rows naming a benchmark but with no score yet (e.g. probes from the picker). */
function waitingProbes() {
  return readProbes().filter((r) => r.benchmark && !r.score).length;
}

function actualScores() {
  if (!state.model) return new Map();
  return new Map(state.model.scores.map((s) => [s.benchmark_id, s.score]));
}

function renderPrediction() {
  const table = byId("prediction-table");
  table.classList.remove("stale");
  byId("predict-chart").classList.remove("stale");
  const chart = byId("predict-chart");
  const answer = state.prediction;
  if (!answer) {
    clear(chart);
    clear(byId("predict-legend"));
    clear(table.tHead);
    clear(table.tBodies[0]);
    byId("predict-chart-note").textContent = "";
    byId("predict-side").textContent = "";
    const waiting = waitingProbes();
    byId("predict-summary").textContent = waiting
      ? `Enter the scores of the ${waiting} benchmark${waiting === 1 ? "" : "s"} you ran.`
      : "Enter at least one score.";
    return;
  }
  const actual = actualScores();
  const probes = answer.predictions.filter((p) => p.observed).length;
  let summary =
    `${answer.predictions.length - probes} benchmarks predicted from ${probes} ` +
    `probe${probes === 1 ? "" : "s"} · snapshot ${answer.version} · ${pct(answer.level)} intervals`;
  const errors = answer.predictions
    .filter((p) => !p.observed && actual.has(p.benchmark))
    .map((p) => Math.abs(p.score - actual.get(p.benchmark)))
    .sort((a, b) => a - b);
  if (errors.length) {
    const median = errors[Math.floor((errors.length - 1) / 2)];
    summary +=
      ` · against ${state.model.model.name}'s ${errors.length} other observed scores: ` +
      `median error ${fmt(median)} points`;
  }
  const waiting = waitingProbes();
  if (waiting) summary += ` · ${waiting} benchmark${waiting === 1 ? "" : "s"} without a score yet`;
  byId("predict-summary").textContent = summary;
  byId("predict-side").textContent = sideText(answer.side);
  renderPredictionChart();
  renderPredictionTable();
}

function visiblePredictions() {
  const needle = state.filter.toLowerCase();
  return state.prediction.predictions.filter((p) => {
    if (!needle) return true;
    return (
      p.benchmark.toLowerCase().includes(needle) ||
      benchmarkName(p.benchmark).toLowerCase().includes(needle)
    );
  });
}

function renderPredictionChart() {
  const chart = byId("predict-chart");
  if (!state.prediction || byId("view-predict").hidden) return;
  const actual = actualScores();
  const shown = visiblePredictions();
  const percent = shown.filter((p) => state.benchmarks.get(p.benchmark)?.scale !== "unbounded");
  const open = shown.length - percent.length;
  percent.sort((a, b) => b.score - a.score);
  const series = [{ label: "predicted", color: PREDICTED_COLOR }];
  if (actual.size)
    series.push({ label: `${state.model.model.name} (observed)`, color: ACTUAL_COLOR });
  const rows = percent.map((p) => {
    const values = [{ ...p, color: p.observed ? PROBE_COLOR : undefined }];
    if (actual.size) {
      const a = actual.get(p.benchmark);
      values.push(a === undefined || p.observed ? null : { score: a, observed: true });
    }
    return {
      key: p.benchmark,
      label: benchmarkName(p.benchmark),
      title: `${benchmarkName(p.benchmark)} (${p.benchmark})`,
      values,
    };
  });
  intervalChart(chart, rows, series, {
    observedWord: "probe",
    ariaLabel: "predicted scores with intervals",
    axisTitle: "score (%)",
  });
  const items = [
    { label: `predicted, ${pct(state.prediction.level)} interval`, color: PREDICTED_COLOR },
    { label: "your probe", color: PROBE_COLOR, shape: "diamond" },
  ];
  if (actual.size) {
    items.push({
      label: `${state.model.model.name}'s observed score`,
      color: ACTUAL_COLOR,
      shape: "diamond",
    });
  }
  byId("predict-legend").replaceChildren(legend(items));
  byId("predict-chart-note").textContent = open
    ? `${open} open-scale benchmark${open === 1 ? "" : "s"} (Elo, ratings, dollars) ` +
      "appear in the table only."
    : "";
}

const COLUMNS = [
  { key: "benchmark", label: "Benchmark" },
  { key: "score", label: "Predicted", numeric: true },
  { key: "low", label: "Low", numeric: true },
  { key: "high", label: "High", numeric: true },
  { key: "confidence", label: "±", numeric: true },
  { key: "p_within_5", label: "P(|err| ≤ 5)", numeric: true },
  { key: "kind", label: "Kind" },
];

function renderPredictionTable() {
  const table = byId("prediction-table");
  const actual = actualScores();
  const columns = actual.size
    ? [...COLUMNS, { key: "actual", label: "Observed", numeric: true }]
    : COLUMNS;
  const headRow = el("tr");
  for (const column of columns) {
    const active = state.sort.key === column.key;
    const arrow = active ? (state.sort.dir > 0 ? " ▲" : " ▼") : "";
    const th = el(
      "th",
      {
        class: column.numeric ? "num" : null,
        "aria-sort": active ? (state.sort.dir > 0 ? "ascending" : "descending") : "none",
        scope: "col",
      },
      el("button", {
        type: "button",
        class: "sort",
        dataset: { key: column.key },
        text: `${column.label}${arrow}`,
      }),
    );
    headRow.append(th);
  }
  table.tHead.replaceChildren(headRow);

  const value = (p, key) => {
    if (key === "benchmark") return benchmarkName(p.benchmark).toLowerCase();
    if (key === "kind") return p.observed ? "probe" : "predicted";
    if (key === "actual") return actual.get(p.benchmark) ?? null;
    return p[key];
  };
  const rows = visiblePredictions().slice();
  const { key, dir } = state.sort;
  const numeric = COLUMNS.find((c) => c.key === key)?.numeric;
  const open = (p) => (state.benchmarks.get(p.benchmark)?.scale === "unbounded" ? 1 : 0);
  rows.sort((a, b) => {
    // scores on open scales (Elo, dollars) would swamp percent ones: they sort after them
    if (numeric && open(a) !== open(b)) return open(a) - open(b);
    const va = value(a, key);
    const vb = value(b, key);
    if (va === null && vb === null) return 0;
    if (va === null) return 1;
    if (vb === null) return -1;
    const order = typeof va === "string" ? va.localeCompare(vb) : va - vb;
    return order * dir || a.benchmark.localeCompare(b.benchmark);
  });
  const body = table.tBodies[0];
  body.replaceChildren(
    ...rows.map((p) => {
      const meta = state.benchmarks.get(p.benchmark);
      const unit = meta && meta.scale === "unbounded" ? meta.unit : null;
      const cells = [
        el(
          "td",
          {},
          el("span", { class: "bname", text: benchmarkName(p.benchmark) }),
          el("span", { class: "bid", text: p.benchmark }),
          unit ? el("span", { class: "unit", text: unit }) : null,
        ),
        el("td", { class: "num score", dataset: { value: String(p.score) }, text: fmt(p.score) }),
        el("td", { class: "num", text: fmt(p.low) }),
        el("td", { class: "num", text: fmt(p.high) }),
        el("td", { class: "num", text: p.observed ? "" : fmt(p.confidence) }),
        el("td", {
          class: "num trust",
          title: "probability that the true score is within 5 points of the prediction",
          text: p.observed || p.p_within_5 === null ? "" : `${Math.round(100 * p.p_within_5)}%`,
        }),
        el(
          "td",
          {},
          el("span", {
            class: p.observed ? "chip probe" : "chip predicted",
            text: p.observed ? "probe" : "predicted",
          }),
        ),
      ];
      if (actual.size) {
        const a = actual.get(p.benchmark);
        cells.push(el("td", { class: "num", text: a === undefined ? "" : fmt(a) }));
      }
      return el(
        "tr",
        { class: p.observed ? "probe" : null, dataset: { benchmark: p.benchmark } },
        cells,
      );
    }),
  );
}

/** Whether a row's benchmark (an id or a name, as typed) is the benchmark `id`. */
function sameBenchmark(typed, id) {
  const text = typed.toLowerCase();
  return text === id.toLowerCase() || text === benchmarkName(id).toLowerCase();
}

/** "Use these probes": the picked benchmarks join the score form as rows to fill; the rows
 * already there keep their scores (a picked benchmark already in the form is not repeated). */
async function usePickedProbes(benchmarks) {
  const rows = readProbes().filter((r) => r.benchmark || r.score);
  const added = benchmarks.filter((id) => !rows.some((r) => sameBenchmark(r.benchmark, id)));
  setProbes([...rows, ...added.map((benchmark) => ({ benchmark, score: "" }))]);
  byId("predict-button").disabled = false;
  await showView("predict");
  await runPredict(); // from the scores already given, if any; the new rows wait for theirs
  const empty = [...byId("probe-rows").querySelectorAll(".probe-score")].find((i) => !i.value);
  empty?.focus();
}

// ------------------------------------------------------------------------ results files
const FORMAT_NAMES = {
  lm_eval: "lm-evaluation-harness",
  inspect: "Inspect",
  eee: "Every Eval Ever",
  helm: "HELM",
  tidy: "model,benchmark,score table",
};

/** The tool that wrote a results file, as people call it: the format's name (EEE names the
 * source it was converted from too), else what the file said. Always a string. */
function toolLabel(format, tool) {
  const name = FORMAT_NAMES[format];
  if (!name) return String(tool || format || "");
  return format === "eee" && tool ? `${name}: ${tool}` : name;
}
const MAX_LISTED = 200; // unused tasks shown (a file of MMLU subtasks lists dozens)
let uploadSeq = 0;
let uploadLimits = null; // GET /api/results: the size the server reads

function bytesText(count) {
  if (count >= 2 ** 20) return `${fmt(count / 2 ** 20)} MiB`;
  if (count >= 1024) return `${fmt(count / 1024)} KiB`;
  return `${count} bytes`;
}

/** Send a results file to this app's own server (nothing else sees it), fill the probe form
 * with the scores it maps onto, and predict as if they had been typed. */
async function readResultsFile(file, model = null) {
  if (!file) return;
  const seq = ++uploadSeq;
  const zone = byId("drop-zone");
  zone.classList.add("busy");
  showError("results-error", "");
  try {
    uploadLimits = uploadLimits || (await getJSON("/api/results"));
    if (file.size > uploadLimits.max_bytes) {
      throw new Error(
        `${file.name}: ${bytesText(file.size)}, over the ${bytesText(uploadLimits.max_bytes)} ` +
          `the page reads; use benchpress predict --from ${file.name}`,
      );
    }
    const answer = await postFile("/api/results", file, {
      name: file.name,
      model,
      version: versionParam(),
    });
    if (seq !== uploadSeq) return;
    state.upload = answer;
    state.uploadFile = file;
    if (state.model) {
      state.model = null;
      renderModelCard();
      side.forget("model");
    }
    if (answer.probes.length) {
      setProbes(answer.probes.map((p) => ({ benchmark: p.benchmark, score: scoreText(p.score) })));
    }
    // the file's model name gives the fold-in its side information, as `predict --from` does
    side.fill(answer.model, "file");
    renderUploadCard();
    await runPredict();
  } catch (error) {
    if (seq !== uploadSeq) return;
    state.upload = null;
    state.uploadFile = null;
    renderUploadCard();
    showError("results-error", error.message);
  } finally {
    if (seq === uploadSeq) zone.classList.remove("busy");
    byId("results-file").value = ""; // the same file may be chosen again
  }
}

function forgetUpload() {
  state.upload = null;
  state.uploadFile = null;
  renderUploadCard();
  return side.forget("file"); // the file's model name goes with it
}

function renderUploadCard() {
  const card = byId("upload-card");
  const u = state.upload;
  if (!u) {
    clear(card);
    card.hidden = true;
    return;
  }
  const tool = [FORMAT_NAMES[u.format] || u.format, u.tool_version].filter(Boolean).join(" ");
  const facts = [
    tool,
    `model ${u.model}`,
    `${u.probes.length} probe score${u.probes.length === 1 ? "" : "s"}`,
  ];
  if (u.evaluated_at) facts.push(`evaluated ${String(u.evaluated_at).slice(0, 10)}`);
  const head = el(
    "div",
    { class: "card-head" },
    el(
      "div",
      {},
      el("h2", {}, "From ", el("span", { class: "file-name", text: u.file })),
      el("p", { class: "muted", text: facts.join(" · ") }),
    ),
    el("button", {
      type: "button",
      class: "ghost",
      text: "Forget this file",
      onclick: () => {
        if (forgetUpload()) runPredict(); // without the file's model name
      },
    }),
  );
  const parts = [head];
  if (u.models.length > 1) {
    const select = el(
      "select",
      { id: "upload-model", "aria-label": "model in the file" },
      u.models.map((m) => el("option", { value: m, text: m })),
    );
    select.value = u.model;
    select.addEventListener("change", () => readResultsFile(state.uploadFile, select.value));
    parts.push(
      el(
        "p",
        { class: "upload-models" },
        el("label", {}, `The file holds ${u.models.length} models; scores of `, select),
      ),
    );
  }
  if (u.probes.length) {
    parts.push(
      el(
        "div",
        { class: "table-wrap short" },
        el(
          "table",
          { class: "data compact", id: "upload-probes" },
          el(
            "thead",
            {},
            el(
              "tr",
              {},
              el("th", { text: "Benchmark" }),
              el("th", { class: "num", text: "Score" }),
              el("th", { class: "num", text: "± stderr" }),
              el("th", { text: "From task (metric)" }),
              el("th", { class: "num", text: "Shots" }),
            ),
          ),
          el(
            "tbody",
            {},
            u.probes.map((p) =>
              el(
                "tr",
                { dataset: { benchmark: p.benchmark } },
                el(
                  "td",
                  {},
                  el("span", { class: "bname", text: benchmarkName(p.benchmark) }),
                  el("span", { class: "bid", text: p.benchmark }),
                ),
                el("td", { class: "num", text: fmt(p.score, 2) }),
                el("td", { class: "num", text: p.stderr === null ? "" : fmt(p.stderr, 2) }),
                el("td", {}, el("code", { text: `${p.task} (${p.metric})` })),
                el("td", { class: "num", text: p.n_shot === null ? "" : String(p.n_shot) }),
              ),
            ),
          ),
        ),
      ),
    );
  } else {
    parts.push(
      el("p", {
        class: "inline-note",
        text:
          `Nothing in ${u.file} maps onto a benchmark of snapshot ${u.version}'s fit, so the ` +
          "probes are unchanged. The tasks it holds are listed below; `benchpress predict " +
          "--from FILE --map task=benchmark` maps one by hand.",
      }),
    );
  }
  if (u.notes.length) {
    parts.push(
      el("h3", { text: "Notes" }),
      el(
        "ul",
        { class: "plain notes", id: "upload-notes" },
        u.notes.map((n) => el("li", { text: n })),
      ),
    );
  }
  const listed = (id, items) =>
    el(
      "ul",
      { class: "plain listing", id },
      items.slice(0, MAX_LISTED).map((item) => el("li", {}, el("code", { text: item }))),
      items.length > MAX_LISTED
        ? el("li", { class: "muted", text: `… and ${items.length - MAX_LISTED} more` })
        : null,
    );
  const section = (id, items, summary, open = true) => {
    if (items.length) {
      parts.push(el("details", { open }, el("summary", { text: summary }), listed(id, items)));
    }
  };
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const subtasks = Object.entries(u.unmapped_subtasks).map(
    ([group, count]) => `${group}: ${plural(count, "subtask")}`,
  );
  const unmapped = [...u.unmapped, ...subtasks];
  section(
    "upload-unmapped",
    unmapped,
    `Unmapped: ${plural(unmapped.length, "task")} no benchmark of ours is mapped to`,
  );
  section(
    "upload-not-fitted",
    u.not_fitted,
    `Not in this snapshot's fit: ${plural(u.not_fitted.length, "benchmark")} ` +
      "(too few scores to be a probe)",
  );
  section(
    "upload-other-metric",
    u.other_metric,
    `${plural(u.other_metric.length, "task")} reported only under another metric`,
    false,
  );
  section(
    "upload-not-run",
    u.not_run,
    `${plural(u.not_run.length, "task")} not computed by the tool`,
    false,
  );
  card.replaceChildren(...parts);
  card.hidden = false;
}

function bindUpload() {
  const zone = byId("drop-zone");
  const input = byId("results-file");
  input.addEventListener("change", () => readResultsFile(input.files[0]));
  const hasFiles = (event) => [...(event.dataTransfer?.types || [])].includes("Files");
  for (const name of ["dragenter", "dragover"]) {
    zone.addEventListener(name, (event) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "copy";
      zone.classList.add("over");
    });
  }
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("over");
    const files = event.dataTransfer?.files;
    if (files && files.length > 1) {
      showError("results-error", "drop one results file at a time");
      return;
    }
    readResultsFile(files?.[0]);
  });
  // a file dropped beside the zone must not replace the page with the file
  for (const name of ["dragover", "drop"]) {
    window.addEventListener(name, (event) => {
      if (hasFiles(event) && !zone.contains(event.target)) event.preventDefault();
    });
  }
}

// ------------------------------------------------------------------------ known models
async function useModel(name, { useProbes = true } = {}) {
  const id = String(name || "").trim();
  if (!id) return;
  try {
    const answer = await getJSON(`/api/models/${encodeURIComponent(id)}`, {
      version: versionParam(),
    });
    state.model = answer;
    if (useProbes && state.upload) forgetUpload();
    // the picked model's own family and release date (a private model: read from its name)
    side.fill(answer.model.private ? answer.model.name : answer.model.model_id, "model");
    showError("predict-error", "");
    if (useProbes) {
      const scores = new Map(answer.scores.map((s) => [s.benchmark_id, s.score]));
      setProbes(
        answer.suggested_probes.map((b) => ({ benchmark: b, score: scoreText(scores.get(b)) })),
      );
    }
    renderModelCard();
    await runPredict();
  } catch (error) {
    showError("predict-error", error.message);
  }
}

function forgetModel() {
  state.model = null;
  renderModelCard();
  renderPrediction();
  updateUrl();
  if (side.forget("model")) runPredict(); // its name no longer gives the side information
}

function syncModelChecks() {
  const chosen = new Set(readProbes().map((r) => r.benchmark));
  for (const box of document.querySelectorAll("#model-card input.use-probe")) {
    box.checked = chosen.has(box.dataset.benchmark);
  }
}

function renderModelCard() {
  const card = byId("model-card");
  if (!state.model) {
    clear(card);
    card.hidden = true;
    return;
  }
  const { model, scores } = state.model;
  const sources = [...new Set(scores.map((s) => s.source))];
  const about = model.private
    ? [
        el("span", { class: "chip private", text: "private" }),
        model.run === null ? "" : ` run ${model.run}, step ${model.step ?? "?"} ·`,
        ` ${scores.length} score${scores.length === 1 ? "" : "s"} on this snapshot's benchmarks`,
        state.model.not_in_snapshot?.length
          ? ` (${state.model.not_in_snapshot.length} others it lacks)`
          : "",
        privateSources(scores),
      ]
    : [
        el("code", { text: model.model_id }),
        ` · ${scores.length} observed scores from ${sources.length} source${sources.length === 1 ? "" : "s"}`,
      ];
  const head = el(
    "div",
    { class: "card-head" },
    el(
      "div",
      {},
      el("h2", { class: "model-name", text: model.name }),
      el("p", { class: "muted" }, about),
    ),
    el("button", {
      type: "button",
      class: "ghost",
      text: "Forget this model",
      onclick: forgetModel,
    }),
  );
  const table = model.private ? privateProvenance(scores) : snapshotProvenance(scores);
  card.replaceChildren(
    head,
    el(
      "details",
      { open: true },
      el("summary", { text: "Observed scores and where they come from" }),
      el("div", { class: "table-wrap short" }, table),
    ),
  );
  card.hidden = false;
  syncModelChecks();
}

/** The first cells of a model card's row: use as a probe, the benchmark, the score. */
function scoreCells(s) {
  const box = el("input", {
    type: "checkbox",
    class: "use-probe",
    dataset: { benchmark: s.benchmark_id },
    "aria-label": `use ${s.benchmark_id} as a probe`,
    disabled: !s.probe,
    title: s.probe ? "use as a probe" : "too few observations in this snapshot to be a probe",
  });
  box.addEventListener("change", () => toggleProbe(s.benchmark_id, s.score, box.checked));
  return [
    el("td", {}, box),
    el(
      "td",
      {},
      el("span", { class: "bname", text: benchmarkName(s.benchmark_id) }),
      el("span", { class: "bid", text: s.benchmark_id }),
    ),
    el("td", { class: "num", text: fmt(s.score) }),
  ];
}

/** " · from lm-evaluation-harness 0.4.9.2 (1 file)": the tools a private model's scores came
 * from, and from how many files; "" when the store kept none. */
function privateSources(scores) {
  const tools = new Set();
  const files = new Set();
  for (const s of scores) {
    const tool = [toolLabel(s.format, s.tool), s.tool_version].filter(Boolean).join(" ");
    if (tool) tools.add(tool);
    if (s.file_sha256 || s.file) files.add(`${s.file_sha256 || ""} ${s.file || ""}`);
  }
  if (!tools.size) return "";
  const count = `${files.size} file${files.size === 1 ? "" : "s"}`;
  return ` · from ${[...tools].join(", ")} (${count})`;
}

/** A day for people ("2026-01-21") from an ISO time; "" for none. */
function dayText(iso) {
  return iso ? String(iso).slice(0, 10) : "";
}

/** A snapshot model's scores: the leaderboard each came from, when fetched, its payload. */
function snapshotProvenance(scores) {
  const rows = scores.map((s) => {
    const fetched = dayText(s.fetched_at);
    return el(
      "tr",
      { dataset: { benchmark: s.benchmark_id } },
      scoreCells(s),
      el("td", {}, sourceLink(s.url, s.source)),
      el("td", { text: fetched, title: s.fetched_at || "" }),
      el(
        "td",
        {},
        el("code", {
          class: "sha",
          text: String(s.payload_sha256 || "").slice(0, 12),
          title: s.payload_sha256 || "",
        }),
      ),
    );
  });
  return el(
    "table",
    { class: "data compact provenance-table" },
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        el("th", { text: "Probe" }),
        el("th", { text: "Benchmark" }),
        el("th", { class: "num", text: "Score" }),
        el("th", { text: "Source" }),
        el("th", { text: "Fetched" }),
        el("th", { text: "Payload sha256" }),
      ),
    ),
    el("tbody", {}, rows),
  );
}

/** A private model's scores (`benchpress models add`, `track`): per score the tool that wrote
 * its file and the tool's version, the task and metric it was read from, the file (its name
 * only) and sha256, and when it was evaluated (else when it was stored). */
function privateProvenance(scores) {
  const rows = scores.map((s) => {
    const when = s.evaluated_at
      ? el("span", { class: "evaluated", text: dayText(s.evaluated_at), title: s.evaluated_at })
      : el("span", {
          class: "stored muted",
          text: s.fetched_at ? `stored ${dayText(s.fetched_at)}` : "",
          title: s.fetched_at
            ? `the file does not say when it was evaluated; stored ${s.fetched_at}`
            : "",
        });
    return el(
      "tr",
      { dataset: { benchmark: s.benchmark_id } },
      scoreCells(s),
      el(
        "td",
        { class: "prov-tool", title: s.tool || "" },
        el("span", { class: "tool-name", text: toolLabel(s.format, s.tool) }),
        s.tool_version ? el("span", { class: "tool-version", text: s.tool_version }) : null,
      ),
      el(
        "td",
        { class: "prov-task" },
        el("code", { text: s.task || "" }),
        s.metric ? el("span", { class: "bid", text: s.metric }) : null,
      ),
      el(
        "td",
        { class: "prov-file" },
        el("span", { class: "file-name", text: s.file || "", title: s.file || "" }),
        el("code", {
          class: "sha",
          text: String(s.file_sha256 || "").slice(0, 12),
          title: s.file_sha256 || "",
        }),
      ),
      el("td", { class: "prov-when" }, when),
    );
  });
  return el(
    "table",
    { class: "data compact provenance-table private-provenance" },
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        el("th", { text: "Probe" }),
        el("th", { text: "Benchmark" }),
        el("th", { class: "num", text: "Score" }),
        el("th", { text: "Tool" }),
        el("th", { text: "Task (metric)" }),
        el("th", { text: "File · sha256" }),
        el("th", { text: "Evaluated" }),
      ),
    ),
    el("tbody", {}, rows),
  );
}

function toggleProbe(benchmark, score, on) {
  const rows = readProbes().filter((r) => r.benchmark || r.score);
  const kept = rows.filter((r) => r.benchmark !== benchmark);
  if (on) kept.push({ benchmark, score: scoreText(score) });
  setProbes(kept);
  runPredict();
}

// ------------------------------------------------------------------------------ compare
function mostReported(limit) {
  return [...state.benchmarks.values()]
    .filter((b) => b.probe)
    .sort((a, b) => b.n_cells - a.n_cells || a.benchmark_id.localeCompare(b.benchmark_id))
    .slice(0, limit)
    .map((b) => b.benchmark_id);
}

function compareDefaults() {
  if (!state.compareModels.length) {
    const top = [...state.models.values()]
      .sort((a, b) => b.n_cells - a.n_cells)
      .map((m) => m.model_id);
    const first = state.model ? [state.model.model.model_id] : [];
    state.compareModels = [...new Set([...first, ...top])].slice(0, 3);
  }
}

/** The default benchmarks of a comparison: those most of the chosen models were measured on
 * (then the most reported), so the first view compares scores, not predictions with
 * predictions; the rest of the list is filled with the most reported ones. */
function measuredBenchmarks(answer, limit) {
  const seen = answer.rows.map((row, r) => ({
    id: row.benchmark,
    probe: Boolean(state.benchmarks.get(row.benchmark)?.probe),
    cells: state.benchmarks.get(row.benchmark)?.n_cells ?? 0,
    observed: row.values.filter((v) => v && v.observed).length,
  }));
  const chosen = seen
    .filter((b) => b.observed > 0 && b.probe)
    .sort((a, b) => b.observed - a.observed || b.cells - a.cells || a.id.localeCompare(b.id))
    .slice(0, limit)
    .map((b) => b.id);
  const fill = mostReported(limit * 2).filter((id) => !chosen.includes(id));
  return [...chosen, ...fill].slice(0, limit);
}

/** Only the rows of `ids`, in that order. */
function compareSubset(answer, ids) {
  const at = new Map(answer.rows.map((row, r) => [row.benchmark, r]));
  const keep = ids.filter((id) => at.has(id)).map((id) => at.get(id));
  return {
    ...answer,
    benchmarks: keep.map((r) => answer.benchmarks[r]),
    rows: keep.map((r) => answer.rows[r]),
  };
}

async function runCompare() {
  compareDefaults();
  const seq = ++compareSeq;
  updateUrl();
  try {
    // no benchmarks chosen: every fitted one comes back, and the default is picked from them
    const pick = !state.compareBenchmarks.length;
    let answer = await getJSON("/api/compare", {
      models: state.compareModels.join(","),
      benchmarks: pick ? undefined : state.compareBenchmarks.join(","),
      level: state.level,
      version: versionParam(),
    });
    if (seq !== compareSeq) return;
    if (pick) answer = compareSubset(answer, measuredBenchmarks(answer, SUGGESTED_COMPARE_BENCHMARKS));
    state.compareModels = answer.models.map((m) => m.model_id);
    state.compareBenchmarks = answer.benchmarks.map((b) => b.benchmark_id);
    showError("compare-error", "");
    renderCompare(answer);
    updateUrl();
  } catch (error) {
    if (seq === compareSeq) showError("compare-error", error.message);
  }
}

function renderCompare(answer) {
  byId("compare-models").replaceChildren(
    ...answer.models.map((m) =>
      chip(modelLabel(m), m.model_id, () => {
        state.compareModels = state.compareModels.filter((id) => id !== m.model_id);
        runCompare();
      }),
    ),
  );
  byId("compare-benchmarks").replaceChildren(
    ...answer.benchmarks.map((b) =>
      chip(b.name, b.benchmark_id, () => {
        state.compareBenchmarks = state.compareBenchmarks.filter((id) => id !== b.benchmark_id);
        runCompare();
      }),
    ),
  );
  const series = answer.models.map((m, i) => ({
    label: modelLabel(m),
    color: PALETTE[i % PALETTE.length],
  }));
  const mine =
    state.compareMine && state.prediction
      ? new Map(state.prediction.predictions.map((p) => [p.benchmark, p]))
      : null;
  if (mine) series.push({ label: "my probes", color: PROBE_COLOR });
  const rows = answer.rows.map((row, r) => {
    const values = row.values.slice();
    if (mine) values.push(mine.get(row.benchmark) || null);
    return { key: row.benchmark, benchmark: answer.benchmarks[r], values };
  });
  const percentRows = rows.filter((r) => r.benchmark.scale !== "unbounded");
  byId("compare-legend").replaceChildren(
    legend([
      ...series.map((s) => ({ label: s.label, color: s.color })),
      { label: "observed", color: "#868e96", shape: "diamond" },
      { label: `predicted (${pct(answer.level)} interval)`, color: "#868e96" },
    ]),
  );
  intervalChart(
    byId("compare-chart"),
    percentRows.map((r) => ({
      key: r.key,
      label: r.benchmark.name,
      title: `${r.benchmark.name} (${r.key})`,
      values: r.values,
    })),
    series,
    { ariaLabel: "models compared", axisTitle: "score (%)", wrapLabels: true },
  );

  const table = byId("compare-table");
  table.tHead.replaceChildren(
    el(
      "tr",
      {},
      el("th", { text: "Benchmark" }),
      series.map((s) =>
        el(
          "th",
          { class: "num" },
          el("span", { class: "dot", dataset: { color: s.color } }),
          el("span", { text: s.label }),
        ),
      ),
    ),
  );
  for (const dot of table.tHead.querySelectorAll(".dot"))
    dot.style.backgroundColor = dot.dataset.color;
  table.tBodies[0].replaceChildren(
    ...rows.map((r) =>
      el(
        "tr",
        { dataset: { benchmark: r.key } },
        el(
          "td",
          {},
          el("span", { class: "bname", text: r.benchmark.name }),
          el("span", { class: "bid", text: r.key }),
        ),
        r.values.map((v) => {
          if (!v || v.score === null || v.score === undefined)
            return el("td", { class: "num muted", text: "—" });
          const title = v.observed
            ? "observed"
            : `${pct(answer.level)} interval ${fmt(v.low)} – ${fmt(v.high)}`;
          return el(
            "td",
            {
              class: v.observed ? "num observed" : "num predicted",
              title,
              dataset: { value: String(v.score) },
            },
            el("span", { text: fmt(v.score) }),
            v.observed
              ? el("span", { class: "tag", text: "obs" })
              : el("span", { class: "pm", text: `±${fmt((v.high - v.low) / 2)}` }),
          );
        }),
      ),
    ),
  );
}

function addCompare(kind) {
  const input = byId(kind === "models" ? "compare-model-input" : "compare-benchmark-input");
  const value = input.value.trim();
  if (!value) return;
  const list = kind === "models" ? state.compareModels : state.compareBenchmarks;
  if (!list.includes(value)) list.push(value);
  input.value = "";
  runCompare();
}

// ------------------------------------------------------------------------------- matrix
async function loadMatrix() {
  try {
    if (!state.matrix || state.matrix.version !== state.snapshot.version) {
      state.matrix = await getJSON("/api/matrix", { version: versionParam() });
    }
    showError("matrix-error", "");
    if (!state.heatmap) state.heatmap = new Heatmap(byId("matrix"), selectCell);
    state.heatmap.setData(state.matrix, byId("matrix-mode").value, byId("matrix-order").value);
    renderMatrixLegend();
    if (state.cell) state.heatmap.select(state.cell.model, state.cell.benchmark);
  } catch (error) {
    showError("matrix-error", error.message);
  }
}

function renderMatrixLegend() {
  const stops = [0, 0.25, 0.5, 0.75, 1];
  const strip = (fade, label) =>
    el(
      "span",
      { class: "ramp" },
      el("span", { class: "ramp-label", text: label }),
      stops.map((t) => {
        const swatch = el("span", { class: "ramp-cell", title: `${t * 100}%` });
        swatch.style.backgroundColor = colour(t, fade);
        return swatch;
      }),
    );
  byId("matrix-legend").replaceChildren(
    strip(0, "observed"),
    strip(PREDICTED_FADE, "predicted"),
    el("span", { class: "legend-item" }, el("span", { class: "suspicious-swatch" }), " suspicious"),
    el("span", {
      class: "muted small",
      text:
        "0 → 100 for percent benchmarks; open scales min → max · rows: model ids, columns: " +
        `benchmark ids (names in the tooltip) · outlined: ${state.matrix.suspicious.length} ` +
        `cells with leave-one-out |z| > ${state.matrix.suspicious_threshold_z} or in a ` +
        "column that mixes scales",
    }),
  );
}

async function selectCell(model, benchmark) {
  const card = byId("cell-card");
  try {
    const answer = await getJSON("/api/cell", {
      model,
      benchmark,
      level: state.level,
      version: versionParam(),
    });
    state.cell = { model: answer.model.model_id, benchmark: answer.benchmark.benchmark_id };
    renderCell(answer);
    updateUrl();
  } catch (error) {
    card.replaceChildren(
      el("h2", { text: "Cell" }),
      el("p", { class: "inline-error", text: error.message }),
    );
  }
}

function renderCell(answer) {
  const facts = [];
  const fact = (label, ...value) => facts.push(el("dt", { text: label }), el("dd", {}, ...value));
  fact(
    "Model",
    el("span", { class: "model-name", text: answer.model.name }),
    " ",
    el("code", { text: answer.model.model_id }),
  );
  fact(
    "Benchmark",
    el("span", { text: answer.benchmark.name }),
    " ",
    el("code", { text: answer.benchmark.benchmark_id }),
  );
  const obs = answer.observation;
  if (obs) {
    fact(
      "Observed score",
      el("strong", { text: fmt(obs.score, 2) }),
      ` ${answer.benchmark.unit || ""}`,
    );
    fact("Source", el("span", { text: obs.source }));
    fact("URL", sourceLink(obs.url));
    fact("Fetched at", el("span", { text: obs.fetched_at || "" }));
    fact("Payload sha256", el("code", { class: "sha full", text: obs.payload_sha256 || "" }));
    fact("Source's model name", el("span", { text: obs.model_key || "" }));
    fact("Observations", el("span", { text: String(obs.n_observations ?? "") }));
  } else {
    fact("Observed score", el("span", { class: "muted", text: "not observed" }));
  }
  if (answer.fitted) {
    const f = answer.fitted;
    fact(
      `Fit (${pct(f.level)})`,
      el("span", { text: `${fmt(f.score)} [${fmt(f.low)} – ${fmt(f.high)}]` }),
    );
  }
  if (answer.conflicts.length) {
    fact(
      "Other sources",
      el(
        "ul",
        { class: "plain" },
        answer.conflicts.map((c) =>
          el("li", {
            text: `${c.other_source}: ${fmt(c.other_score, 2)} (chosen ${c.chosen_source} ${fmt(c.chosen_score, 2)}, Δ ${fmt(c.difference, 2)})`,
          }),
        ),
      ),
    );
  }
  byId("cell-card").replaceChildren(
    el("h2", { text: "Cell" }),
    el("dl", { class: "facts" }, facts),
  );
}

// ---------------------------------------------------------------------------------- fit
async function loadFit() {
  try {
    if (!state.plots || state.plots.version !== state.snapshot.version) {
      state.plots = await getJSON("/api/plots", { version: versionParam() });
    }
    showError("fit-error", "");
    renderFit();
  } catch (error) {
    showError("fit-error", error.message);
  }
}

function renderFit() {
  const plots = state.plots;
  if (!plots || byId("view-fit").hidden) return;
  if (plots.spectrum) spectrumChart(byId("spectrum-chart"), plots.spectrum);
  else
    byId("spectrum-chart").replaceChildren(
      el("p", { class: "muted", text: "No singular values in this manifest." }),
    );

  const points = plots.loadings.benchmarks.filter((b) => b.x !== null && b.y !== null);
  const labelled = new Set(outliers(points, 16).map((b) => b.benchmark_id));
  const share = plots.loadings.variance_share.map((s) => `${fmt(s * 100)}%`);
  scatterChart(
    byId("loadings-chart"),
    points.map((b) => ({
      x: b.x,
      y: b.y,
      color: b.scale === "unbounded" ? PROBE_COLOR : PREDICTED_COLOR,
      title: `${b.name} (${b.benchmark_id})\nfactor 1: ${fmt(b.x, 3)}, factor 2: ${fmt(b.y, 3)}`,
      label: labelled.has(b.benchmark_id) ? b.name : null,
    })),
    {
      xTitle: `factor 1 (${share[0]} of variance)`,
      yTitle: `factor 2 (${share[1]})`,
      zeroLines: true,
      ariaLabel: "benchmark loadings",
    },
  );

  const holdout = byId("holdout-chart");
  if (plots.holdout) {
    scatterChart(
      holdout,
      plots.holdout.pairs.map(([a, p]) => ({
        x: a,
        y: p,
        color: PREDICTED_COLOR,
        title: `actual ${fmt(a)}, predicted ${fmt(p)}`,
      })),
      {
        xTitle: "actual score",
        yTitle: "predicted (held out)",
        diagonal: true,
        radius: 2.5,
        square: true,
        ariaLabel: "predicted vs actual",
      },
    );
    holdout.append(
      el("p", {
        class: "muted small",
        text:
          `${plots.holdout.cells} held-out cells · median absolute error ` +
          `${fmt(plots.holdout.medae, 2)} points · dashed line: predicted = actual` +
          (plots.holdout.note ? ` · ${plots.holdout.note}` : ""),
      }),
    );
  } else {
    const medae = state.snapshot.manifest.quality?.holdout_medae;
    holdout.replaceChildren(
      el("p", {
        class: "muted",
        text:
          "This snapshot records no held-out (actual, predicted) pairs (neither in its " +
          "manifest nor a residuals.parquet), so there is nothing to plot." +
          (medae ? ` Its held-out median absolute error is ${fmt(medae, 2)} points.` : ""),
      }),
    );
  }
  renderManifest();
}

/** The points farthest from the centre (in units of each axis's spread), for labels. */
function outliers(points, count) {
  const mean = (k) => points.reduce((a, p) => a + p[k], 0) / (points.length || 1);
  const spread = (k, m) =>
    Math.sqrt(points.reduce((a, p) => a + (p[k] - m) ** 2, 0) / (points.length || 1)) || 1;
  const mx = mean("x");
  const my = mean("y");
  const sx = spread("x", mx);
  const sy = spread("y", my);
  const distance = (p) => Math.hypot((p.x - mx) / sx, (p.y - my) / sy);
  return [...points].sort((a, b) => distance(b) - distance(a)).slice(0, count);
}

function renderManifest() {
  const m = state.snapshot.manifest;
  const items = [];
  const fact = (label, value) => {
    if (value === null || value === undefined || value === "") return;
    items.push(
      el("dt", { text: label }),
      el("dd", {}, value instanceof Node ? value : el("span", { text: String(value) })),
    );
  };
  fact("Version", m.version);
  fact("Published", m.published_at);
  fact("Parent", m.parent || "none");
  fact("Content hash", el("code", { class: "sha full", text: m.content_hash || "" }));
  const c = m.counts || {};
  if ([c.models, c.benchmarks, c.cells].every((n) => typeof n === "number"))
    fact("Size", `${c.models} models × ${c.benchmarks} benchmarks, ${c.cells} observed cells`);
  if (Array.isArray(c.sources)) fact("Sources", c.sources.join(", "));
  const q = m.quality || {};
  if (q.variance_share_top2 !== undefined)
    fact("Top-2 variance share", `${fmt(q.variance_share_top2 * 100)}%`);
  if (q.fill_rate !== undefined) fact("Fill rate", `${fmt(q.fill_rate * 100)}%`);
  if (q.in_sample_medae !== undefined)
    fact("In-sample MedAE", `${fmt(q.in_sample_medae, 2)} points`);
  if (q.holdout_medae !== undefined && q.holdout_medae !== null)
    fact("Held-out MedAE", `${fmt(q.holdout_medae, 2)} points`);
  // the parameters the snapshot's method has (the server drops any it does not record)
  const fit = state.snapshot.fit;
  if (fit) {
    fact("Method", fit.method_label);
    const params = fit.params.map((p) => `${p.label} ${p.value}`).join(", ");
    if (params) fact("Fit", params);
  }
  if (Array.isArray(m.accepted_drift) && m.accepted_drift.length)
    fact("Accepted drift", m.accepted_drift.join(", "));
  byId("manifest").replaceChildren(...items);
}

// -------------------------------------------------------------------------------- views
function showView(view) {
  state.view = view;
  for (const name of VIEWS) byId(`view-${name}`).hidden = name !== view;
  for (const button of document.querySelectorAll("#tabs button")) {
    const active = button.dataset.view === view;
    button.classList.toggle("active", active);
    button.setAttribute("aria-current", active ? "page" : "false");
  }
  updateUrl();
  return renderView();
}

function renderView() {
  if (state.view === "predict") {
    renderPredictionChart();
    return Promise.resolve();
  }
  if (state.view === "probes") return picker.show();
  if (state.view === "compare") return loadPrivate().then(runCompare);
  if (state.view === "runs") return runs.show();
  if (state.view === "new-benchmark") return newBenchmark.show();
  if (state.view === "matrix") return loadMatrix();
  return loadFit();
}

async function changeVersion(version) {
  state.version = version;
  state.pinned = true;
  state.matrix = null;
  state.plots = null;
  picker.versionChanged();
  runs.versionChanged();
  newBenchmark.versionChanged();
  try {
    await loadSnapshot();
    showError("error", "");
  } catch (error) {
    showError("error", error.message);
    return;
  }
  side.versionChanged(); // the date of a known model may differ between versions
  if (state.model) await useModel(state.model.model.model_id, { useProbes: false });
  else await runPredict();
  if (state.view !== "predict") await renderView();
}

function bind() {
  picker.bind();
  runs.bind();
  newBenchmark.bind();
  bindUpload();
  byId("goto-picker").addEventListener("click", () => showView("probes"));
  byId("probe-form").addEventListener("submit", (event) => {
    event.preventDefault();
    runPredict();
  });
  byId("probe-rows").addEventListener("input", () => {
    syncModelChecks();
    schedulePredict();
  });
  byId("probe-rows").addEventListener("change", () => schedulePredict());
  side.bind();
  byId("add-row").addEventListener("click", () => {
    const row = probeRow();
    byId("probe-rows").append(row);
    row.querySelector("input").focus();
  });
  byId("clear-rows").addEventListener("click", () => {
    setProbes([]);
    runPredict();
  });
  byId("model-use").addEventListener("click", () => useModel(byId("model-input").value));
  byId("model-input").addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      useModel(byId("model-input").value);
    }
  });
  byId("table-filter").addEventListener("input", (event) => {
    state.filter = event.target.value;
    if (state.prediction) {
      renderPredictionChart();
      renderPredictionTable();
    }
  });
  byId("prediction-table").tHead.addEventListener("click", (event) => {
    const button = event.target.closest("button.sort");
    if (!button) return;
    const key = button.dataset.key;
    state.sort =
      state.sort.key === key
        ? { key, dir: -state.sort.dir }
        : { key, dir: key === "benchmark" || key === "kind" ? 1 : -1 };
    renderPredictionTable();
  });
  for (const button of document.querySelectorAll("#tabs button")) {
    button.addEventListener("click", () => showView(button.dataset.view));
  }
  byId("version").addEventListener("change", (event) => changeVersion(event.target.value));
  byId("level").addEventListener("change", (event) => {
    state.level = Number(event.target.value);
    runPredict();
    if (state.view === "compare") runCompare();
    if (state.view === "matrix" && state.cell) selectCell(state.cell.model, state.cell.benchmark);
    if (state.view === "runs") runs.load();
    if (state.view === "new-benchmark") newBenchmark.load();
  });
  byId("compare-model-add").addEventListener("click", () => addCompare("models"));
  byId("compare-benchmark-add").addEventListener("click", () => addCompare("benchmarks"));
  for (const [id, kind] of [
    ["compare-model-input", "models"],
    ["compare-benchmark-input", "benchmarks"],
  ]) {
    byId(id).addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        addCompare(kind);
      }
    });
  }
  byId("compare-benchmark-reset").addEventListener("click", () => {
    state.compareBenchmarks = []; // the default: the most reported the models were measured on
    runCompare();
  });
  byId("compare-mine").addEventListener("change", (event) => {
    state.compareMine = event.target.checked;
    runCompare();
  });
  byId("matrix-mode").addEventListener("change", () => loadMatrix());
  byId("matrix-order").addEventListener("change", () => loadMatrix());
  window.addEventListener(
    "resize",
    debounce(() => {
      if (state.view === "predict") renderPredictionChart();
      if (state.view === "fit") renderFit();
      if (state.view === "runs") runs.render();
    }, 200),
  );
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
  const initial = readUrl();
  bind();
  setLevelOption(state.level);
  setProbes(parseScoresText(initial.scores));
  try {
    await loadVersions();
    await loadSnapshot();
    await loadPrivate();
  } catch (error) {
    showError("error", error.message);
    document.body.dataset.ready = "error";
    return;
  }
  if (initial.model) await useModel(initial.model, { useProbes: !initial.scores });
  else await runPredict();
  await side.refresh();
  await showView(state.view);
  document.body.dataset.ready = "true";
}

start();
