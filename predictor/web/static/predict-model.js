// The Predict tab's known models: a model picked under "start from a known model" gives the
// form its observed scores as probes, and its card shows every observed score with where it
// came from (a leaderboard, or for a private model the tool, task and file). Wraps
// /api/models/<id>.

import { el, clear, byId, fmt, scoreText, sourceLink, showError } from "./dom.js";
import { getJSON } from "./api.js";
import { ctx, state, benchmarkName } from "./predict-state.js";
import { forgetUpload } from "./predict-upload.js";

export async function useModel(name, { useProbes = true } = {}) {
  const id = String(name || "").trim();
  if (!id) return;
  try {
    const answer = await getJSON(`/api/models/${encodeURIComponent(id)}`, {
      version: ctx.page.version(),
    });
    state.model = answer;
    if (useProbes && state.upload) forgetUpload();
    // the picked model's own family and release date (a private model: read from its name)
    ctx.side.fill(answer.model.private ? answer.model.name : answer.model.model_id, "model");
    showError("predict-error", "");
    if (useProbes) {
      const scores = new Map(answer.scores.map((s) => [s.benchmark_id, s.score]));
      ctx.setProbes(
        answer.suggested_probes.map((b) => ({ benchmark: b, score: scoreText(scores.get(b)) })),
      );
    }
    renderModelCard();
    await ctx.runPredict();
  } catch (error) {
    showError("predict-error", error.message);
  }
}

export function forgetModel() {
  state.model = null;
  renderModelCard();
  ctx.renderPrediction();
  ctx.page.updateUrl();
  if (ctx.side.forget("model")) ctx.runPredict(); // its name no longer gives the side information
}

export function syncModelChecks() {
  const chosen = new Set(ctx.readProbes().map((r) => r.benchmark));
  for (const box of document.querySelectorAll("#model-card input.use-probe")) {
    box.checked = chosen.has(box.dataset.benchmark);
  }
}

export function renderModelCard() {
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
    const tool = [ctx.page.toolLabel(s.format, s.tool), s.tool_version].filter(Boolean).join(" ");
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
  return provenanceTable("provenance-table", ["Source", "Fetched", "Payload sha256"], rows);
}

/** A provenance table: the probe, benchmark and score columns, then `more` headings. */
function provenanceTable(cls, more, rows) {
  const head = [
    el("th", { text: "Probe" }),
    el("th", { text: "Benchmark" }),
    el("th", { class: "num", text: "Score" }),
    ...more.map((text) => el("th", { text })),
  ];
  return el(
    "table",
    { class: `data compact ${cls}` },
    el("thead", {}, el("tr", {}, ...head)),
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
        el("span", { class: "tool-name", text: ctx.page.toolLabel(s.format, s.tool) }),
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
  return provenanceTable(
    "provenance-table private-provenance",
    ["Tool", "Task (metric)", "File · sha256", "Evaluated"],
    rows,
  );
}

function toggleProbe(benchmark, score, on) {
  const rows = ctx.readProbes().filter((r) => r.benchmark || r.score);
  const kept = rows.filter((r) => r.benchmark !== benchmark);
  if (on) kept.push({ benchmark, score: scoreText(score) });
  ctx.setProbes(kept);
  ctx.runPredict();
}

