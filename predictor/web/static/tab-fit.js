// The Fit tab: how the snapshot's fit looks (singular value spectrum, the benchmarks in the
// two-factor plane, predicted vs actual on held-out cells) and its manifest. Wraps /api/plots.

import { el, byId, fmt, showError } from "./dom.js";
import { getJSON } from "./api.js";
import { spectrumChart, scatterChart, legend, PROBE_COLOR, PREDICTED_COLOR } from "./charts.js";

let page = null; // the shell (app.js): the snapshot, the version asked for
let plots = null; // /api/plots answer, for the snapshot it was read for

async function loadFit() {
  try {
    if (!plots || plots.version !== page.state.snapshot.version) {
      plots = await getJSON("/api/plots", { version: page.version() });
    }
    showError("fit-error", "");
    renderFit();
  } catch (error) {
    showError("fit-error", error.message);
  }
}

/** The rank the snapshot's fit keeps (its `rank` parameter), or null when it records none. */
function fittedRank() {
  const param = page.state.snapshot.fit?.params?.find((p) => p.key === "rank");
  const rank = Number(param?.value ?? page.state.snapshot.manifest.fit_params?.rank);
  return Number.isInteger(rank) && rank > 0 ? rank : null;
}

/** The spectrum card's title, note and legend, from the numbers the plot draws: the fitted
 * rank, the share of each of its factors and their sum (the line's value at that rank). */
function renderSpectrum() {
  const chart = byId("spectrum-chart");
  const s = plots.spectrum;
  const rank = fittedRank();
  byId("spectrum-title").textContent = rank
    ? `Singular value spectrum · fitted rank ${rank}`
    : "Singular value spectrum";
  if (!s) {
    byId("spectrum-note").textContent = "";
    byId("spectrum-legend").replaceChildren();
    chart.replaceChildren(el("p", { class: "muted", text: "No singular values in this manifest." }));
    return;
  }
  const kept = Math.min(rank || 2, s.variance_share.length);
  const shares = s.variance_share.slice(0, kept).map((v, i) => `σ${i + 1} ${fmt(v * 100)}%`);
  const total = `${fmt(s.cumulative_share[kept - 1] * 100)}%`;
  byId("spectrum-note").textContent = rank
    ? `The fit keeps ${kept} factor${kept === 1 ? "" : "s"}: together ${total} of the ` +
      `variance (${shares.join(", ")}); the rest is treated as noise.`
    : `The first ${kept} factors carry ${total} of the variance (${shares.join(", ")}).`;
  byId("spectrum-legend").replaceChildren(
    legend([
      { label: `factors the fit keeps (σ1–σ${kept})`, color: "#3b5bdb", shape: "square" },
      { label: "factors left out", color: "#bac8ff", shape: "square" },
      { label: "cumulative variance share (right axis)", color: PROBE_COLOR },
    ]),
  );
  spectrumChart(chart, s, kept);
}

function renderFit() {
  if (!plots || byId("view-fit").hidden) return;
  renderSpectrum();

  const points = plots.loadings.benchmarks.filter((b) => b.x !== null && b.y !== null);
  const labelled = new Set(outliers(points, 16).map((b) => b.benchmark_id));
  const share = plots.loadings.variance_share.map((s) => `${fmt(s * 100)}%`);
  byId("loadings-legend").replaceChildren(
    legend([
      { label: "percent benchmark", color: PREDICTED_COLOR },
      { label: "open-scale benchmark (Elo, ratings, dollars)", color: PROBE_COLOR },
    ]),
  );
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
      xTitle: `factor 1 (${share[0]} of the completed matrix's variance)`,
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
    const medae = page.state.snapshot.manifest.quality?.holdout_medae;
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
  const m = page.state.snapshot.manifest;
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
  // the spectrum plotted gives the shares, so the facts and the plot say the same numbers
  const rank = fittedRank();
  const cumulative = plots?.spectrum?.cumulative_share;
  if (rank && cumulative?.length >= rank)
    fact("Fitted rank", `${rank} (${fmt(cumulative[rank - 1] * 100)}% of the variance)`);
  if (cumulative?.length >= 2) fact("Top-2 variance share", `${fmt(cumulative[1] * 100)}%`);
  if (q.fill_rate !== undefined) fact("Fill rate", `${fmt(q.fill_rate * 100)}%`);
  if (q.in_sample_medae !== undefined)
    fact("In-sample MedAE", `${fmt(q.in_sample_medae, 2)} points`);
  if (q.holdout_medae !== undefined && q.holdout_medae !== null)
    fact("Held-out MedAE", `${fmt(q.holdout_medae, 2)} points`);
  // the parameters the snapshot's method has (the server drops any it does not record)
  const fit = page.state.snapshot.fit;
  if (fit) {
    fact("Method", fit.method_label);
    const params = fit.params.map((p) => `${p.label} ${p.value}`).join(", ");
    if (params) fact("Fit", params);
  }
  if (Array.isArray(m.accepted_drift) && m.accepted_drift.length)
    fact("Accepted drift", m.accepted_drift.join(", "));
  byId("manifest").replaceChildren(...items);
}

export default {
  name: "fit",
  label: "Fit",
  init(shell) {
    page = shell;
  },
  show: loadFit,
  versionChanged() {
    plots = null;
  },
  resized: renderFit,
};
