// The Matrix tab: every model's score on every benchmark as a heatmap (observed, predicted or
// both), and a clicked cell's provenance (its source, URL, payload, conflicts). Wraps
// /api/matrix and /api/cell; the link keeps the selected cell (`cell=MODEL,BENCHMARK`).

import { el, byId, fmt, sourceLink, showError, pct } from "./dom.js";
import { getJSON } from "./api.js";
import { Heatmap, colour, PREDICTED_FADE } from "./heatmap.js";

let page = null; // the shell (app.js): the snapshot, the level, the URL
let matrix = null; // /api/matrix answer, for the snapshot it was read for
let heatmap = null;
let cell = null; // the selected cell: { model, benchmark }

async function loadMatrix() {
  try {
    if (!matrix || matrix.version !== page.state.snapshot.version) {
      matrix = await getJSON("/api/matrix", { version: page.version() });
    }
    showError("matrix-error", "");
    if (!heatmap) heatmap = new Heatmap(byId("matrix"), selectCell);
    heatmap.setData(matrix, byId("matrix-mode").value, byId("matrix-order").value);
    renderMatrixLegend();
    if (cell) heatmap.select(cell.model, cell.benchmark);
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
        `benchmark ids (names in the tooltip) · outlined: ${matrix.suspicious.length} ` +
        `cells with leave-one-out |z| > ${matrix.suspicious_threshold_z} or in a ` +
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
      level: page.state.level,
      version: page.version(),
    });
    cell = { model: answer.model.model_id, benchmark: answer.benchmark.benchmark_id };
    renderCell(answer);
    page.updateUrl();
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

export default {
  name: "matrix",
  label: "Matrix",
  init(shell) {
    page = shell;
    byId("matrix-mode").addEventListener("change", () => loadMatrix());
    byId("matrix-order").addEventListener("change", () => loadMatrix());
  },
  readUrl(params) {
    const [model, benchmark, ...rest] = (params.get("cell") || "").split(",");
    cell = !rest.length && model && benchmark ? { model, benchmark } : null;
  },
  query(active) {
    return active && cell ? { cell: `${cell.model},${cell.benchmark}` } : {};
  },
  show: loadMatrix,
  versionChanged() {
    matrix = null;
  },
  levelChanged(active) {
    if (active && cell) selectCell(cell.model, cell.benchmark);
  },
};
