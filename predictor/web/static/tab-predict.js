// The Predict tab: the user's model's scores (typed, read from a results file, or a known
// model's), its side information (side.js) and the predictions for every other benchmark, as
// a report card (predict-report.js). This module holds the score form and /api/predict; the
// results-file card is predict-upload.js, the known-model card predict-model.js. Its inputs
// (scores, model, side information) are in every tab's link: the other tabs use them.

import { el, clear, byId, fmt, scoreText, debounce, showError, pct } from "./dom.js";
import { postJSON } from "./api.js";
import { SideInfo, reasonText } from "./side.js";
import { ctx, state, benchmarkName, plural } from "./predict-state.js";
import {
  renderReport,
  renderReportChart,
  clearReport,
  bindReport,
  actualScores,
} from "./predict-report.js";
import { bindUpload } from "./predict-upload.js";
import { useModel, syncModelChecks } from "./predict-model.js";

let page = null; // the shell (app.js): the snapshot, the level, the URL, the other tabs
let side = null; // the model's name, family, release date and base: chips filled from /api/side
let initial = { scores: null, model: null }; // what the link the page was opened with gave
let predictSeq = 0;

/** The known model the probes came from (its /api/models answer), or null. */
export function knownModel() {
  return state.model;
}

/** The last prediction from the user's probes (/api/predict answer), or null. */
export function currentPrediction() {
  return state.prediction;
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
    byId("predict-summary").textContent = `Fix ${culprit(message)} to update the prediction.`;
    byId("prediction-table").classList.add("stale");
    byId("predict-chart").classList.add("stale");
    page.updateUrl();
  }
}

/** What an error from /api/predict asks to fix, from the argument it names first: "the
 * release date (the Released chip, under Model name, family and release date)" for a refused
 * release_date, "the scores" for a score the server refused. */
export function culprit(message) {
  const text = String(message || "");
  const named = text.match(/^(release_date|family|base|model)\b/)?.[1];
  const where = "under “Model name, family and release date”";
  if (named === "release_date") return `the release date (the Released chip ${where})`;
  if (named === "family") return `the family (the Family chip ${where})`;
  if (named === "base") return `the base model (the Base chip ${where})`;
  if (named === "model") return `the model name (${where})`;
  return "the scores";
}

/** Rows naming a benchmark but with no score yet (e.g. probes from the picker). */
function waitingProbes() {
  return readProbes().filter((r) => r.benchmark && !r.score).length;
}


function renderPrediction() {
  const table = byId("prediction-table");
  table.classList.remove("stale");
  byId("predict-chart").classList.remove("stale");
  const answer = state.prediction;
  byId("predict-empty").hidden = Boolean(answer) || waitingProbes() > 0;
  if (!answer) {
    clearReport();
    byId("predict-side").textContent = "";
    const waiting = waitingProbes();
    byId("predict-summary").textContent = waiting
      ? `Enter the scores of the ${plural(waiting, "benchmark")} you ran.`
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
  renderReport();
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
  bindReport();
  for (const button of document.querySelectorAll("[data-example-scores]")) {
    button.addEventListener("click", () => useExample(button.dataset.exampleScores));
  }
}

/** An empty state's "Try an example": its probe scores fill the form and predict. */
function useExample(text) {
  setProbes(parseScoresText(text));
  runPredict();
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
    Object.assign(ctx, {
      page,
      side,
      runPredict,
      setProbes,
      readProbes,
      syncModelChecks,
      renderPrediction,
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
    side.setDateRange(page.state.snapshot.release_date_range);
    if (initial.model) await useModel(initial.model, { useProbes: !initial.scores });
    else await runPredict();
    await side.refresh();
  },
  show: renderReportChart,
  async snapshotLoaded() {
    side.versionChanged(); // the date of a known model may differ between versions
    side.setDateRange(page.state.snapshot.release_date_range);
    if (state.model) await useModel(state.model.model.model_id, { useProbes: false });
    else await runPredict();
  },
  levelChanged() {
    runPredict(); // whatever tab is shown: Compare draws this prediction too
  },
  resized: renderReportChart,
};
