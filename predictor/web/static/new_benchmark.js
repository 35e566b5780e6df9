// The New benchmark view: a team's own benchmark run on a few known models (model=score
// pairs) is folded into the snapshot's fit, and every model is predicted on it, with the
// public benchmarks it behaves most like and the models to run next. Wraps
// POST /api/new-benchmark; every model and benchmark name goes in as text (dom.js).

import { el, byId, fmt, show } from "./dom.js";
import { postJSON } from "./api.js";

const SCALES = ["percent", "unbounded"];
const MIN_SCORES = 3; // predictor/new_benchmark.py MIN_SCORES

/** "gpt-4o=61.2\nclaude-sonnet-4 = 66" (lines or commas) -> "gpt-4o=61.2,claude-sonnet-4=66". */
export function knownText(text) {
  return String(text || "")
    .split(/[\n,]/)
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const at = part.indexOf("=");
      return at < 0 ? part : `${part.slice(0, at).trim()}=${part.slice(at + 1).trim()}`;
    })
    .join(",");
}

function percentText(p) {
  return p === null || p === undefined ? "" : `${Math.round(p * 100)}%`;
}

export class NewBenchmarkView {
  /** version(): the version parameter (undefined = latest); level(): the interval level;
   * onChange(): the URL. */
  constructor({ version, level, onChange }) {
    this.version = version;
    this.level = level;
    this.onChange = onChange;
    this.known = ""; // the pairs as typed (model=score, lines or commas)
    this.scale = "percent";
    this.name = "";
    this.answer = null;
    this.seq = 0;
  }

  // ---------------------------------------------------------------------------- the URL
  readUrl(params) {
    this.known = params.get("known") || "";
    const scale = params.get("scale");
    this.scale = SCALES.includes(scale) ? scale : "percent";
    this.name = params.get("name") || "";
  }

  query() {
    return {
      known: knownText(this.known) || null,
      scale: this.scale === "percent" ? null : this.scale,
      name: this.name.trim() || null,
    };
  }

  versionChanged() {
    this.answer = null;
  }

  message(id, text) {
    const node = byId(id);
    node.textContent = text || "";
    node.hidden = !text;
  }

  // ------------------------------------------------------------------------ loading
  /** Called when the view is shown: the form from the URL, and its answer if it has pairs. */
  async show() {
    byId("nb-scores").value = this.known.includes("\n")
      ? this.known
      : knownText(this.known).split(",").filter(Boolean).join("\n");
    byId("nb-scale").value = this.scale;
    byId("nb-name").value = this.name;
    if (!this.answer && knownText(this.known)) await this.load();
    else this.render();
  }

  readForm() {
    this.known = byId("nb-scores").value;
    this.scale = byId("nb-scale").value;
    this.name = byId("nb-name").value;
  }

  async load() {
    const scores = knownText(this.known);
    const pairs = scores ? scores.split(",").length : 0;
    this.message("nb-warning", "");
    if (pairs < MIN_SCORES) {
      this.answer = null;
      // asked to predict from too few scores (or none): say what is missing, never nothing
      this.message(
        "nb-error",
        pairs
          ? `give the scores of at least ${MIN_SCORES} models (model=score, one per line); ` +
              `got ${pairs}`
          : `type the scores of at least ${MIN_SCORES} models first, one model=score per ` +
              "line (for example gpt-4o=61.2)",
      );
      if (!pairs) byId("nb-scores").focus();
      this.render();
      this.onChange();
      return;
    }
    const seq = ++this.seq;
    byId("nb-results").classList.add("stale");
    try {
      const answer = await postJSON("/api/new-benchmark", {
        version: this.version(),
        scores,
        scale: this.scale,
        level: this.level(),
        name: this.name.trim() || undefined,
      });
      if (seq !== this.seq) return;
      this.answer = answer;
      this.message("nb-error", "");
      this.message("nb-warning", (answer.warnings || []).join(" "));
    } catch (error) {
      if (seq !== this.seq) return;
      this.answer = null;
      this.message("nb-error", error.message);
    } finally {
      if (seq === this.seq) byId("nb-results").classList.remove("stale");
      this.render();
      this.onChange();
    }
  }

  // ------------------------------------------------------------------------ rendering
  render() {
    const a = this.answer;
    show(byId("nb-results"), Boolean(a));
    if (!a) return;
    const pct = `${Math.round(a.level * 1000) / 10}%`;
    const unit = a.unit ? ` ${a.unit}` : "";
    byId("nb-summary").textContent =
      `${a.name}: ${a.predictions.length} models of snapshot ${a.version} predicted from ` +
      `${Object.keys(a.known).length} known scores (${a.scale}), ${pct} intervals.`;
    byId("nb-notes").textContent = a.notes.length ? `Names read as: ${a.notes.join("; ")}.` : "";
    this.renderPredictions(a, unit);
    this.renderSimilar(a);
    this.renderNext(a, pct);
  }

  renderPredictions(a, unit) {
    const above = new Map(
      a.ranking
        .filter((r) => r.p_better_than_next !== null && r.p_better_than_next !== undefined)
        .map((r) => [r.model, r.p_better_than_next]),
    );
    const table = byId("nb-table");
    table.tHead.replaceChildren(
      el(
        "tr",
        {},
        el("th", { class: "num", text: "Rank" }),
        el("th", { text: "Model" }),
        el("th", { class: "num", text: `Predicted${unit}` }),
        el("th", { class: "num", text: "Interval" }),
        el("th", { class: "num", text: "P(above next)", title: "P(this model > the next row)" }),
        el("th", { text: "Kind" }),
      ),
    );
    table.tBodies[0].replaceChildren(
      ...a.predictions.map((r) =>
        el(
          "tr",
          { class: r.observed ? "known" : "", dataset: { model: r.model_id } },
          el("td", { class: "num", text: String(r.rank) }),
          el("td", { class: "model-name", title: r.name, text: r.model_id }),
          el("td", { class: `num ${r.observed ? "observed" : "predicted"}`, text: fmt(r.predicted) }),
          el("td", {
            class: "num",
            text: r.observed ? "—" : `${fmt(r.lower)} – ${fmt(r.upper)}`,
          }),
          el("td", { class: "num", text: percentText(above.get(r.model_id)) }),
          el("td", { text: r.observed ? "known" : "predicted" }),
        ),
      ),
    );
  }

  renderSimilar(a) {
    const table = byId("nb-similar");
    table.tHead.replaceChildren(
      el(
        "tr",
        {},
        el("th", { class: "num", text: "Rank" }),
        el("th", { text: "Benchmark" }),
        el("th", { class: "num", text: "r" }),
        el("th", { class: "num", text: "Models", title: "models that report it" }),
      ),
    );
    table.tBodies[0].replaceChildren(
      ...a.similar.map((r) =>
        el(
          "tr",
          { dataset: { benchmark: r.benchmark_id } },
          el("td", { class: "num", text: String(r.rank) }),
          el("td", { title: r.benchmark_id, text: r.name }),
          el("td", { class: "num", text: fmt(r.correlation, 3) }),
          el("td", { class: "num", text: String(r.n_models) }),
        ),
      ),
    );
  }

  renderNext(a, pct) {
    const table = byId("nb-next");
    table.tHead.replaceChildren(
      el(
        "tr",
        {},
        el("th", { class: "num", text: "Rank" }),
        el("th", { text: "Model" }),
        el("th", { class: "num", text: "Predicted" }),
        el("th", { class: "num", text: "Removes", title: "share of the other models' variance" }),
        el("th", { class: "num", text: `Mean ${pct} width now → after` }),
      ),
    );
    table.tBodies[0].replaceChildren(
      ...a.next_models.map((r) =>
        el(
          "tr",
          { dataset: { model: r.model_id } },
          el("td", { class: "num", text: String(r.rank) }),
          el("td", { class: "model-name", title: r.name, text: r.model_id }),
          el("td", { class: "num", text: fmt(r.predicted) }),
          el("td", { class: "num", text: percentText(r.variance_reduction) }),
          el("td", { class: "num", text: `${fmt(r.width_before)} → ${fmt(r.width_after)}` }),
        ),
      ),
    );
  }

  bind() {
    byId("nb-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.readForm();
      this.load();
    });
    byId("nb-scale").addEventListener("change", () => {
      this.readForm();
      if (this.answer) this.load();
    });
    for (const id of ["nb-scores", "nb-name"]) {
      // kept while typing, so another tab and back (or a copied link) keeps the text
      byId(id).addEventListener("input", () => {
        this.readForm();
        this.onChange();
      });
    }
  }
}
