// The Predict tab: the user's model's scores (typed, read from a results file, or a known
// model's), its side information (side.js) and the predictions for every other benchmark, as
// a chart and a sortable table. Wraps /api/predict, /api/results and /api/models/<id>. Its
// inputs (scores, model, side information) are in every tab's link: the other tabs use them.

import { el, clear, byId, fmt, scoreText, sourceLink, debounce, showError, pct } from "./dom.js";
import { getJSON, postJSON, postFile } from "./api.js";
import { intervalChart, legend, PROBE_COLOR, PREDICTED_COLOR, ACTUAL_COLOR } from "./charts.js";
import { SideInfo, reasonText } from "./side.js";

let page = null; // the shell (app.js): the snapshot, the level, the URL, the other tabs
let side = null; // the model's name, family, release date and base: chips filled from /api/side
let initial = { scores: null, model: null }; // what the link the page was opened with gave
let predictSeq = 0;

const state = {
  model: null, // /api/models/<id> answer when the probes came from a known model
  upload: null, // /api/results answer when the probes came from a results file
  uploadFile: null, // that file (kept in the page only, to read another model of it)
  prediction: null,
  shareProbes: null, // probes of the last successful prediction, for the URL
  sort: { key: "score", dir: -1 },
  filter: "",
};

/** The known model the probes came from (its /api/models answer), or null. */
export function knownModel() {
  return state.model;
}

/** The last prediction from the user's probes (/api/predict answer), or null. */
export function currentPrediction() {
  return state.prediction;
}

/** " (200 of 12,032 items)" for a score from a random subset of the task's items
 * (`benchpress run --items`), "" for a full run's: the card tells the two apart. */
function subsetText(probe) {
  if (probe.items_total === undefined || probe.items_total === null) return "";
  const count = (n) => Number(n).toLocaleString("en-US");
  return ` (${count(probe.items)} of ${count(probe.items_total)} items)`;
}

function benchmarkName(id) {
  return page.state.benchmarks.get(id)?.name || id;
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
    page.updateUrl();
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
      level: page.state.level,
      version: page.version(),
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
    page.updateUrl();
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
    page.updateUrl();
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
  const percent = shown.filter(
    (p) => page.state.benchmarks.get(p.benchmark)?.scale !== "unbounded",
  );
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
  const open = (p) => (page.state.benchmarks.get(p.benchmark)?.scale === "unbounded" ? 1 : 0);
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
      const meta = page.state.benchmarks.get(p.benchmark);
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
export async function usePickedProbes(benchmarks) {
  const rows = readProbes().filter((r) => r.benchmark || r.score);
  const added = benchmarks.filter((id) => !rows.some((r) => sameBenchmark(r.benchmark, id)));
  setProbes([...rows, ...added.map((benchmark) => ({ benchmark, score: "" }))]);
  byId("predict-button").disabled = false;
  await page.showView("predict");
  await runPredict(); // from the scores already given, if any; the new rows wait for theirs
  const empty = [...byId("probe-rows").querySelectorAll(".probe-score")].find((i) => !i.value);
  empty?.focus();
}

// ------------------------------------------------------------------------ results files
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
      version: page.version(),
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
  const tool = [page.toolLabel(u.format), u.tool_version].filter(Boolean).join(" ");
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
                el("td", { class: "num", text: fmt(p.score, 2) + subsetText(p) }),
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
      version: page.version(),
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
  page.updateUrl();
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
    const tool = [page.toolLabel(s.format, s.tool), s.tool_version].filter(Boolean).join(" ");
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
        el("span", { class: "tool-name", text: page.toolLabel(s.format, s.tool) }),
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

function bind() {
  bindUpload();
  byId("goto-picker").addEventListener("click", () => page.showView("probes"));
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
}

export default {
  name: "predict",
  label: "Predict",
  init(shell) {
    page = shell;
    side = new SideInfo({
      version: () => page.version(),
      onChange: () => {
        page.updateUrl();
        schedulePredict();
      },
    });
    bind();
  },
  // the scores, the model and its side information: read and written whatever tab is shown
  readUrl(params) {
    side.readUrl(params);
    initial = { scores: params.get("scores"), model: params.get("model") };
    setProbes(parseScoresText(initial.scores));
  },
  query() {
    // after a successful prediction: its canonical ids; otherwise the inputs as typed
    const probes = state.shareProbes || readProbes();
    return {
      scores: scoresText(probes),
      model: state.model ? state.model.model.model_id : null,
      ...side.query(),
    };
  },
  async start() {
    if (initial.model) await useModel(initial.model, { useProbes: !initial.scores });
    else await runPredict();
    await side.refresh();
  },
  show: renderPredictionChart,
  async snapshotLoaded() {
    side.versionChanged(); // the date of a known model may differ between versions
    if (state.model) await useModel(state.model.model.model_id, { useProbes: false });
    else await runPredict();
  },
  levelChanged() {
    runPredict(); // whatever tab is shown: Compare draws this prediction too
  },
  resized: renderPredictionChart,
};
