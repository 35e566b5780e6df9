// The Compare tab: known models side by side (observed scores, the fit's predictions with
// their intervals), the team's private models and the user's own prediction among them, with
// each model's P(best) and expected rank per benchmark and across those shown, and P(A > B)
// for every pair on a benchmark. Wraps /api/compare; the link keeps the models and benchmarks
// (`models=`, `benchmarks=`). A name the link gives that could mean several models (`o3`), or
// a misspelt one, is left out and its variants or close matches offered; the others are
// compared.

import { el, byId, fmt, chip, showError, pct } from "./dom.js";
import { getJSON } from "./api.js";
import { intervalChart, legend, PALETTE, PROBE_COLOR } from "./charts.js";
import { knownModel, currentPrediction } from "./tab-predict.js";

const SUGGESTED_COMPARE_BENCHMARKS = 12;

let page = null; // the shell (app.js): the snapshot, the level, the URL, the private models
let compareModels = [];
let compareBenchmarks = [];
let compareMine = false; // "include my probe prediction"
let compareSeq = 0;
let pairBenchmark = null; // the benchmark whose P(A > B) matrix is shown

/** A model's name as a picker shows it: private ones say so. */
function modelLabel(m) {
  return m.private ? `${m.name} (private)` : m.name;
}

function mostReported(limit) {
  return [...page.state.benchmarks.values()]
    .filter((b) => b.probe)
    .sort((a, b) => b.n_cells - a.n_cells || a.benchmark_id.localeCompare(b.benchmark_id))
    .slice(0, limit)
    .map((b) => b.benchmark_id);
}

function compareDefaults() {
  if (!compareModels.length) {
    const top = [...page.state.models.values()]
      .sort((a, b) => b.n_cells - a.n_cells)
      .map((m) => m.model_id);
    const first = knownModel() ? [knownModel().model.model_id] : [];
    compareModels = [...new Set([...first, ...top])].slice(0, 3);
  }
}

/** The default benchmarks of a comparison: those most of the chosen models were measured on
 * (then the most reported), so the first view compares scores, not predictions with
 * predictions; the rest of the list is filled with the most reported ones. */
function measuredBenchmarks(answer, limit) {
  const seen = answer.rows.map((row, r) => ({
    id: row.benchmark,
    probe: Boolean(page.state.benchmarks.get(row.benchmark)?.probe),
    cells: page.state.benchmarks.get(row.benchmark)?.n_cells ?? 0,
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
  page.updateUrl();
  try {
    // no benchmarks chosen: every fitted one comes back, and the default is picked from them
    const pick = !compareBenchmarks.length;
    const ask = (benchmarks) =>
      getJSON("/api/compare", {
        models: compareModels.join(","),
        benchmarks: benchmarks ? benchmarks.join(",") : undefined,
        level: page.state.level,
        version: page.version(),
      });
    let answer = await ask(pick ? null : compareBenchmarks);
    if (seq !== compareSeq) return;
    if (pick && answer.models.length) {
      // the odds across benchmarks are those of the benchmarks shown: ask for those
      const chosen = measuredBenchmarks(answer, SUGGESTED_COMPARE_BENCHMARKS);
      answer = compareSubset(await ask(chosen), chosen);
      if (seq !== compareSeq) return;
    }
    compareModels = answer.models.map((m) => m.model_id);
    compareBenchmarks = answer.benchmarks.map((b) => b.benchmark_id);
    showError("compare-error", "");
    renderCompare(answer);
    page.updateUrl();
  } catch (error) {
    if (seq === compareSeq) showError("compare-error", error.message);
  }
}

/** A probability as a percentage for reading: 0.4183 -> "42%", under 1% "<1%". */
function chance(p) {
  if (p === null || p === undefined) return "—";
  if (p > 0 && p < 0.005) return "<1%";
  if (p < 1 && p > 0.995) return ">99%";
  return `${Math.round(p * 100)}%`;
}

/** The element `id`, made (a `tag` with `props`) and put after `after` the first time. */
function ensure(id, after, tag = "div", props = {}) {
  let node = document.getElementById(id);
  if (!node) {
    node = el(tag, { id, ...props });
    after.after(node);
  }
  return node;
}

/** The names of the link left out: one that could mean several models, with its variants,
 * and a misspelt one, with its close matches; choosing one adds it to the comparison. */
function renderAmbiguous(answer) {
  const box = ensure("compare-ambiguous", byId("compare-error"), "div", { class: "notice" });
  const found = [
    ...(answer.ambiguous || []).map((a) => ({ ...a, says: "could be several models; compare:" })),
    ...(answer.unknown || []).map((a) => ({
      ...a,
      says: a.variants.length
        ? "is not a model of this snapshot, left out; did you mean:"
        : "is not a model of this snapshot, left out",
    })),
  ];
  box.hidden = !found.length;
  box.replaceChildren(
    ...found.map((a) =>
      el(
        "p",
        { class: "ambiguous", dataset: { name: a.name } },
        el("span", { text: `“${a.name}” ${a.says} ` }),
        a.variants.map((id) =>
          el("button", {
            type: "button",
            class: "ghost variant",
            text: id,
            dataset: { model: id },
            onclick: () => {
              if (!compareModels.includes(id)) compareModels.push(id);
              runCompare();
            },
          }),
        ),
      ),
    ),
  );
}

/** P(best) and expected rank of each model across the benchmarks shown. */
function renderOverall(answer, series) {
  const wrap = ensure("compare-overall", byId("compare-table").closest(".table-wrap"), "div", {
    class: "odds-block",
  });
  const across = answer.overall || { benchmarks: [] };
  const n = across.benchmarks.length;
  wrap.hidden = !answer.models.length;
  const heading =
    n > 0
      ? `Across the ${n} benchmark${n === 1 ? "" : "s"} where every model has a score`
      : "Across benchmarks: no benchmark has a score for every model";
  const rows = answer.models.map((m, i) =>
    el(
      "tr",
      { dataset: { model: m.model_id } },
      el("td", {}, el("span", { class: "mname", text: series[i].label })),
      el("td", { class: "num p-best", text: n ? chance(across.p_best[i]) : "—" }),
      el("td", { class: "num e-rank", text: n ? fmt(across.expected_rank[i]) : "—" }),
    ),
  );
  wrap.replaceChildren(
    el("h3", { text: heading }),
    el(
      "p",
      { class: "hint" },
      "P(best): how often the model comes out first, in draws of every score within its " +
        "interval (an observed score within its measurement noise), ordered by mean rank " +
        "over the benchmarks; expected rank: its mean place (1 = best). My probes are not " +
        "among them.",
    ),
    el(
      "div",
      { class: "table-wrap short" },
      el(
        "table",
        { id: "compare-overall-table", class: "data compact" },
        el(
          "thead",
          {},
          el(
            "tr",
            {},
            el("th", { text: "Model" }),
            el("th", { class: "num", text: "P(best)" }),
            el("th", { class: "num", text: "expected rank" }),
          ),
        ),
        el("tbody", {}, rows),
      ),
    ),
  );
}

/** P(A > B) on one benchmark for every pair: row model better than column model. */
function renderPairwise(answer, series) {
  const wrap = ensure("compare-pairwise", byId("compare-overall"), "div", { class: "odds-block" });
  const ranked = answer.rows.filter((row) => row.p_better.some((r) => r.some((p) => p !== null)));
  wrap.hidden = !ranked.length;
  if (!ranked.length) return wrap.replaceChildren();
  if (!ranked.some((row) => row.benchmark === pairBenchmark)) pairBenchmark = ranked[0].benchmark;
  const row = ranked.find((r) => r.benchmark === pairBenchmark);
  const names = new Map(answer.benchmarks.map((b) => [b.benchmark_id, b.name]));
  const select = el(
    "select",
    { id: "compare-pair-benchmark", "aria-label": "benchmark of the P(A > B) table" },
    ranked.map((r) =>
      el("option", { value: r.benchmark, text: names.get(r.benchmark) || r.benchmark }),
    ),
  );
  select.value = pairBenchmark;
  select.addEventListener("change", () => {
    pairBenchmark = select.value;
    renderPairwise(answer, series);
  });
  wrap.replaceChildren(
    el("h3", {}, el("span", { text: "P(row model better than column model) on " }), select),
    el(
      "div",
      { class: "table-wrap short" },
      el(
        "table",
        { id: "compare-pairwise-table", class: "data compact" },
        el(
          "thead",
          {},
          el(
            "tr",
            {},
            el("th", { text: "" }),
            answer.models.map((m, j) =>
              el("th", { class: "num" }, el("span", { class: "mname", text: series[j].label })),
            ),
          ),
        ),
        el(
          "tbody",
          {},
          answer.models.map((m, i) =>
            el(
              "tr",
              { dataset: { model: m.model_id } },
              el("th", {}, el("span", { class: "mname", text: series[i].label })),
              answer.models.map((other, j) =>
                el("td", {
                  class: "num",
                  dataset: { against: other.model_id },
                  text: i === j ? "" : chance(row.p_better[i][j]),
                }),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

function renderCompare(answer) {
  renderAmbiguous(answer);
  byId("compare-models").replaceChildren(
    ...answer.models.map((m) =>
      chip(modelLabel(m), m.model_id, () => {
        compareModels = compareModels.filter((id) => id !== m.model_id);
        runCompare();
      }),
    ),
  );
  byId("compare-benchmarks").replaceChildren(
    ...answer.benchmarks.map((b) =>
      chip(b.name, b.benchmark_id, () => {
        compareBenchmarks = compareBenchmarks.filter((id) => id !== b.benchmark_id);
        runCompare();
      }),
    ),
  );
  const series = answer.models.map((m, i) => ({
    label: modelLabel(m),
    color: PALETTE[i % PALETTE.length],
  }));
  const mine =
    compareMine && currentPrediction()
      ? new Map(currentPrediction().predictions.map((p) => [p.benchmark, p]))
      : null;
  if (mine) series.push({ label: "my probes", color: PROBE_COLOR });
  const rows = answer.rows.map((row, r) => {
    const values = row.values.slice();
    if (mine) values.push(mine.get(row.benchmark) || null);
    return { key: row.benchmark, benchmark: answer.benchmarks[r], values, odds: row };
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
          el("span", { class: "mname", text: s.label, title: s.label }),
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
        r.values.map((v, i) => {
          if (!v || v.score === null || v.score === undefined)
            return el("td", { class: "num muted", text: "—" });
          const title = v.observed
            ? "observed"
            : `${pct(answer.level)} interval ${fmt(v.low)} – ${fmt(v.high)}`;
          const best = i < answer.models.length ? r.odds.p_best[i] : null;
          const rank = i < answer.models.length ? r.odds.expected_rank[i] : null;
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
            best === null
              ? null
              : el("span", {
                  class: "odds",
                  title: "P(best) on this benchmark, and the expected rank (1 = best)",
                  text: `P(best) ${chance(best)} · rank ${fmt(rank)}`,
                }),
          );
        }),
      ),
    ),
  );
  renderOverall(answer, series);
  renderPairwise(answer, series);
}

function addCompare(kind) {
  const input = byId(kind === "models" ? "compare-model-input" : "compare-benchmark-input");
  const value = input.value.trim();
  if (!value) return;
  const list = kind === "models" ? compareModels : compareBenchmarks;
  if (!list.includes(value)) list.push(value);
  input.value = "";
  runCompare();
}

function bind() {
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
    compareBenchmarks = []; // the default: the most reported the models were measured on
    runCompare();
  });
  byId("compare-mine").addEventListener("change", (event) => {
    compareMine = event.target.checked;
    runCompare();
  });
}

export default {
  name: "compare",
  label: "Compare models",
  init(shell) {
    page = shell;
    bind();
  },
  readUrl(params) {
    compareModels = (params.get("models") || "").split(",").filter(Boolean);
    compareBenchmarks = (params.get("benchmarks") || "").split(",").filter(Boolean);
  },
  query(active) {
    if (!active) return {};
    return { models: compareModels.join(","), benchmarks: compareBenchmarks.join(",") };
  },
  show: () => page.loadPrivate().then(runCompare),
  levelChanged(active) {
    if (active) runCompare();
  },
};
