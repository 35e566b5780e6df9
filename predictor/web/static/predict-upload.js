// The Predict tab's results files: a file dropped on the form (or chosen) is read by this
// app's own server (/api/results), its scores fill the probe form and its card lists what was
// used and what was set aside (tasks we have no benchmark for, benchmarks this snapshot does
// not know), so a file with one unknown benchmark still predicts from the rest.

import { el, clear, byId, fmt, scoreText, showError } from "./dom.js";
import { getJSON, postFile } from "./api.js";
import { ctx, state, benchmarkName, plural } from "./predict-state.js";
import { renderModelCard } from "./predict-model.js";

function subsetText(probe) {
  if (probe.items_total === undefined || probe.items_total === null) return "";
  const count = (n) => Number(n).toLocaleString("en-US");
  return ` (${count(probe.items)} of ${count(probe.items_total)} items)`;
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
export async function readResultsFile(file, model = null) {
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
      version: ctx.page.version(),
    });
    if (seq !== uploadSeq) return;
    state.upload = answer;
    state.uploadFile = file;
    if (state.model) {
      state.model = null;
      renderModelCard();
      ctx.side.forget("model");
    }
    if (answer.probes.length) {
      ctx.setProbes(answer.probes.map((p) => ({ benchmark: p.benchmark, score: scoreText(p.score) })));
    }
    // the file's model name gives the fold-in its side information, as `predict --from` does
    ctx.side.fill(answer.model, "file");
    renderUploadCard();
    await ctx.runPredict();
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

export function forgetUpload() {
  state.upload = null;
  state.uploadFile = null;
  renderUploadCard();
  return ctx.side.forget("file"); // the file's model name goes with it
}

export function renderUploadCard() {
  const card = byId("upload-card");
  const u = state.upload;
  if (!u) {
    clear(card);
    card.hidden = true;
    return;
  }
  const tool = [ctx.page.toolLabel(u.format), u.tool_version].filter(Boolean).join(" ");
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
        if (forgetUpload()) ctx.runPredict(); // without the file's model name
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
          "probes are unchanged. The tasks it holds are listed below: type the score of one " +
          "under the benchmark it measures in the form to use it.",
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
  const subtasks = Object.entries(u.unmapped_subtasks).map(
    ([group, count]) => `${group}: ${plural(count, "subtask")}`,
  );
  const unknown = (u.unknown || []).map(
    (b) => b.benchmark + (b.suggestions.length ? ` (close: ${b.suggestions.join(", ")})` : ""),
  );
  section(
    "upload-unknown",
    unknown,
    `Not in snapshot ${u.version}: ${plural(unknown.length, "benchmark")} set aside, ` +
      "the rest used",
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

/** "Try an example file": the example CSV the page serves, read as if it had been dropped. */
async function readExampleFile() {
  try {
    const answer = await fetch("/static/example-results.csv");
    if (!answer.ok) throw new Error(`the example file could not be read (${answer.status})`);
    const blob = await answer.blob();
    await readResultsFile(new File([blob], "example-results.csv", { type: "text/csv" }));
  } catch (error) {
    showError("results-error", error.message);
  }
}

export function bindUpload() {
  const zone = byId("drop-zone");
  const input = byId("results-file");
  byId("upload-example").addEventListener("click", readExampleFile);
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

