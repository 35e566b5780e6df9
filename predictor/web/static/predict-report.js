// The Predict tab's report card: the probes given, pinned first and marked as measured, then
// every prediction grouped by the benchmark's category (coding, math, knowledge, ...) as a
// chart and a table. Each interval reads low–high (intervals are asymmetric: 35.5–100 around
// 80.6, never ± a half-width). Groups fold; "by predicted score" gives one sorted list.

import { el, clear, byId, fmt, pct } from "./dom.js";
import { intervalChart, legend, PROBE_COLOR, PREDICTED_COLOR, ACTUAL_COLOR } from "./charts.js";
import { ctx, state, benchmarkName, plural } from "./predict-state.js";

const PROBES = "probes"; // the group of the scores given
const NO_CATEGORY = "other";

/** "Instruction following" for `instruction_following`. */
export function categoryLabel(category) {
  const text = String(category || NO_CATEGORY).replaceAll("_", " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** "35.5–100.0": an interval as its two ends. */
export function intervalText(p) {
  return `${fmt(p.low)}–${fmt(p.high)}`;
}

function meta(p) {
  return ctx.page.state.benchmarks.get(p.benchmark);
}

function isOpenScale(p) {
  return meta(p)?.scale === "unbounded";
}

export function actualScores() {
  if (!state.model) return new Map();
  return new Map(state.model.scores.map((s) => [s.benchmark_id, s.score]));
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

/** The value a column sorts by. */
function sortValue(p, key, actual) {
  if (key === "benchmark") return benchmarkName(p.benchmark).toLowerCase();
  if (key === "kind") return p.observed ? "probe" : "predicted";
  if (key === "actual") return actual.get(p.benchmark) ?? null;
  if (key === "interval") return p.high - p.low;
  return p[key];
}

function sorted(rows, actual) {
  const { key, dir } = state.sort;
  const numeric = COLUMNS.find((c) => c.key === key)?.numeric || key === "actual";
  return rows.slice().sort((a, b) => {
    // scores on open scales (Elo, dollars) would swamp percent ones: they sort after them
    if (numeric && isOpenScale(a) !== isOpenScale(b)) return isOpenScale(a) ? 1 : -1;
    const va = sortValue(a, key, actual);
    const vb = sortValue(b, key, actual);
    if (va === null && vb === null) return 0;
    if (va === null) return 1;
    if (vb === null) return -1;
    const order = typeof va === "string" ? va.localeCompare(vb) : va - vb;
    return order * dir || a.benchmark.localeCompare(b.benchmark);
  });
}

/** The report card's groups: [{key, label, rows}], the probes first, then the categories,
 * the largest first; one group of everything when ordered by score. */
export function reportGroups(actual = actualScores()) {
  const shown = visiblePredictions();
  if (state.order === "score") return [{ key: "all", label: null, rows: sorted(shown, actual) }];
  const probes = shown.filter((p) => p.observed);
  const byCategory = new Map();
  for (const p of shown.filter((q) => !q.observed)) {
    const key = meta(p)?.category || NO_CATEGORY;
    if (!byCategory.has(key)) byCategory.set(key, []);
    byCategory.get(key).push(p);
  }
  const categories = [...byCategory.entries()].sort(
    ([a, ra], [b, rb]) =>
      (a === NO_CATEGORY) - (b === NO_CATEGORY) || rb.length - ra.length || a.localeCompare(b),
  );
  const groups = [];
  if (probes.length)
    groups.push({ key: PROBES, label: "Your probes (measured)", rows: sorted(probes, actual) });
  for (const [key, rows] of categories) {
    groups.push({ key, label: categoryLabel(key), rows: sorted(rows, actual) });
  }
  return groups;
}

/** "46 benchmarks · median 62.3": what a group head says beside its name. */
function groupFacts(group) {
  const scores = group.rows
    .filter((p) => !isOpenScale(p))
    .map((p) => p.score)
    .sort((a, b) => a - b);
  const parts = [plural(group.rows.length, "benchmark")];
  if (scores.length) {
    const word = group.key === PROBES ? "median score" : "median predicted";
    parts.push(`${word} ${fmt(scores[Math.floor((scores.length - 1) / 2)])}`);
  }
  return parts.join(" · ");
}

// ------------------------------------------------------------------------------ the chart
export function renderReportChart() {
  const chart = byId("predict-chart");
  if (!state.prediction || byId("view-predict").hidden) return;
  const actual = actualScores();
  const series = [{ label: "predicted", color: PREDICTED_COLOR }];
  if (actual.size)
    series.push({ label: `${state.model.model.name} (observed)`, color: ACTUAL_COLOR });
  const rows = [];
  let open = 0;
  for (const group of reportGroups(actual)) {
    const percent = group.rows.filter((p) => !isOpenScale(p));
    open += group.rows.length - percent.length;
    if (!percent.length) continue;
    if (group.label) rows.push({ heading: `${group.label} · ${groupFacts(group)}`, key: group.key });
    if (state.collapsed.has(group.key)) continue;
    // the chart reads best highest first whatever the table's column order
    const ordered = state.order === "score" ? percent : percent.sort((a, b) => b.score - a.score);
    for (const p of ordered) rows.push(chartRow(p, actual));
  }
  intervalChart(chart, rows, series, {
    observedWord: "probe",
    ariaLabel: "predicted scores with intervals",
    axisTitle: "score (%)",
  });
  const items = [
    { label: `predicted, ${pct(state.prediction.level)} interval (low–high)`, color: PREDICTED_COLOR },
    { label: "your probe (measured)", color: PROBE_COLOR, shape: "diamond" },
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
    ? `${plural(open, "open-scale benchmark")} (Elo, ratings, dollars) appear in the table only.`
    : "";
}

function chartRow(p, actual) {
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
}

// ------------------------------------------------------------------------------ the table
const COLUMNS = [
  { key: "benchmark", label: "Benchmark" },
  { key: "score", label: "Predicted", numeric: true },
  { key: "interval", label: "Interval (low–high)", numeric: true },
  { key: "p_within_5", label: "P(|err| ≤ 5)", numeric: true },
  { key: "kind", label: "Kind" },
];

function headRow(columns) {
  const row = el("tr");
  for (const column of columns) {
    const active = state.sort.key === column.key;
    const arrow = active ? (state.sort.dir > 0 ? " ▲" : " ▼") : "";
    row.append(
      el(
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
      ),
    );
  }
  return row;
}

function predictionRow(p, actual, withActual) {
  const unit = isOpenScale(p) ? meta(p)?.unit : null;
  const cells = [
    el(
      "td",
      {},
      el("span", { class: "bname", text: benchmarkName(p.benchmark) }),
      el("span", { class: "bid", text: p.benchmark }),
      unit ? el("span", { class: "unit", text: unit }) : null,
    ),
    el("td", { class: "num score", dataset: { value: String(p.score) }, text: fmt(p.score) }),
    el("td", {
      class: "num interval",
      title: p.observed ? "" : `${pct(p.level)} interval: ${fmt(p.low)} to ${fmt(p.high)}`,
      text: p.observed ? "" : intervalText(p),
    }),
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
        text: p.observed ? "measured (probe)" : "predicted",
      }),
    ),
  ];
  if (withActual) {
    const a = actual.get(p.benchmark);
    cells.push(el("td", { class: "num", text: a === undefined ? "" : fmt(a) }));
  }
  return el(
    "tr",
    { class: p.observed ? "probe" : null, dataset: { benchmark: p.benchmark } },
    cells,
  );
}

function groupHead(group, width) {
  const folded = state.collapsed.has(group.key);
  return el(
    "tr",
    { class: "group-head" },
    el(
      "th",
      { colspan: String(width), scope: "rowgroup" },
      el(
        "button",
        {
          type: "button",
          class: "group-toggle",
          dataset: { group: group.key },
          "aria-expanded": folded ? "false" : "true",
        },
        el("span", { class: "fold", text: folded ? "▸" : "▾" }),
        el("span", { class: "group-name", text: group.label }),
        el("span", { class: "group-facts muted", text: groupFacts(group) }),
      ),
    ),
  );
}

export function renderReportTable() {
  const table = byId("prediction-table");
  const actual = actualScores();
  const columns = actual.size
    ? [...COLUMNS, { key: "actual", label: "Observed", numeric: true }]
    : COLUMNS;
  table.tHead.replaceChildren(headRow(columns));
  for (const body of [...table.tBodies].slice(1)) body.remove();
  const bodies = reportGroups(actual).map((group) => {
    const rows = group.rows.map((p) => predictionRow(p, actual, actual.size > 0));
    if (!group.label) return el("tbody", {}, rows);
    const folded = state.collapsed.has(group.key);
    for (const row of rows) row.hidden = folded;
    return el(
      "tbody",
      { class: "group", dataset: { group: group.key } },
      groupHead(group, columns.length),
      rows,
    );
  });
  const first = table.tBodies[0];
  if (bodies.length) {
    first.replaceWith(bodies[0]);
    table.append(...bodies.slice(1));
  } else {
    clear(first);
  }
}

export function clearReport() {
  const table = byId("prediction-table");
  clear(byId("predict-chart"));
  clear(byId("predict-legend"));
  clear(table.tHead);
  for (const body of [...table.tBodies].slice(1)) body.remove();
  clear(table.tBodies[0]);
  byId("predict-chart-note").textContent = "";
}

export function renderReport() {
  renderReportChart();
  renderReportTable();
}

/** The table's controls: the order, the filter, a column's sort, a group's fold. */
export function bindReport() {
  byId("table-filter").addEventListener("input", (event) => {
    state.filter = event.target.value;
    if (state.prediction) renderReport();
  });
  byId("table-order").addEventListener("change", (event) => {
    state.order = event.target.value === "score" ? "score" : "category";
    state.sort = { key: "score", dir: -1 };
    if (state.prediction) renderReport();
  });
  const table = byId("prediction-table");
  table.tHead.addEventListener("click", (event) => {
    const button = event.target.closest("button.sort");
    if (!button) return;
    const key = button.dataset.key;
    state.sort =
      state.sort.key === key
        ? { key, dir: -state.sort.dir }
        : { key, dir: key === "benchmark" || key === "kind" ? 1 : -1 };
    renderReportTable();
  });
  table.addEventListener("click", (event) => {
    const button = event.target.closest("button.group-toggle");
    if (!button) return;
    const key = button.dataset.group;
    if (state.collapsed.has(key)) state.collapsed.delete(key);
    else state.collapsed.add(key);
    renderReport();
    table.querySelector(`button.group-toggle[data-group="${CSS.escape(key)}"]`)?.focus();
  });
}
