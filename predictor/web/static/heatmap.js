// The score matrix as a canvas heatmap: observed cells in full colour, the fit's predictions
// faded, missing cells grey, cells `suspicious_scores()` flags outlined. The axes show ids
// throughout (the sources' display names mix styles); the tooltip gives the display name with
// the id. Text is drawn with fillText (never parsed as markup); the tooltip is a div filled
// through textContent.

import { el, fmt } from "./dom.js";

const STOPS = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
]; // viridis

export function colour(t, fade = 0) {
  const u = Math.min(1, Math.max(0, t)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(u));
  const f = u - i;
  const rgb = STOPS[i].map((c, k) => c + (STOPS[i + 1][k] - c) * f);
  const mixed = rgb.map((c) => Math.round(c + (255 - c) * fade));
  return `rgb(${mixed[0]},${mixed[1]},${mixed[2]})`;
}

export const PREDICTED_FADE = 0.55;
export const SUSPICIOUS_COLOUR = "#e03131";
const CELL_W = 12;
const CELL_H = 13;
const FONT = "10.5px system-ui, -apple-system, 'Segoe UI', sans-serif";
const GAP = 6; // between a label and the cells
const MARGIN = 12; // right of the last column and under the last row

/** The widest of `labels` drawn in FONT, in CSS pixels: the label margins are sized to the
 * ids so that every one is drawn whole. */
function widest(ctx, labels) {
  ctx.font = FONT;
  return Math.ceil(Math.max(0, ...labels.map((text) => ctx.measureText(text).width)));
}

/** Column-wise position in [0, 1]: percent columns on 0–100, open scales min–max. */
function normaliser(data) {
  return data.benchmarks.map((_, j) => {
    if (data.scales[j] === "percent") return (v) => v / 100;
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < data.models.length; i += 1) {
      for (const v of [data.observed[i][j], data.predicted[i][j]]) {
        if (v !== null) {
          lo = Math.min(lo, v);
          hi = Math.max(hi, v);
        }
      }
    }
    const span = hi - lo || 1;
    return (v) => (v - lo) / span;
  });
}

export class Heatmap {
  constructor(container, onSelect) {
    this.container = container;
    this.onSelect = onSelect;
    this.canvas = el("canvas", {
      class: "heatmap",
      tabindex: "0",
      "aria-label": "score matrix heatmap",
    });
    this.tooltip = el("div", { class: "tooltip", hidden: true });
    this.scroller = el("div", { class: "heatmap-scroll" }, this.canvas);
    container.append(this.scroller, this.tooltip);
    this.selected = null;
    this.canvas.heatmap = this; // cellCentre() and the drawn labels, for tests and tools
    this.canvas.addEventListener("mousemove", (e) => this.hover(e));
    this.canvas.addEventListener("mouseleave", () => {
      this.tooltip.hidden = true;
    });
    this.canvas.addEventListener("click", (e) => {
      const cell = this.cellAt(e);
      if (cell) this.select(cell.model, cell.benchmark);
    });
  }

  setData(data, mode, order) {
    this.data = data;
    this.mode = mode;
    this.norm = normaliser(data);
    this.flags = new Map(
      (data.suspicious || []).map((f) => [`${f.model}\u0000${f.benchmark}`, f]),
    );
    this.canvas.setAttribute(
      "aria-label",
      `score matrix heatmap: rows are model ids, columns benchmark ids; ` +
        `${this.flags.size} suspicious cells outlined`,
    );
    const n = data.models.length;
    const m = data.benchmarks.length;
    const value = (i, j) => {
      const v = data.observed[i][j] ?? data.predicted[i][j];
      return v === null ? null : this.norm[j](v);
    };
    const mean = (vals) => {
      const ok = vals.filter((v) => v !== null);
      return ok.length ? ok.reduce((a, b) => a + b, 0) / ok.length : -1;
    };
    this.rows = [...Array(n).keys()];
    this.cols = [...Array(m).keys()];
    if (order === "name") {
      this.rows.sort((a, b) => data.models[a].localeCompare(data.models[b]));
      this.cols.sort((a, b) => data.benchmarks[a].localeCompare(data.benchmarks[b]));
    } else {
      const rowMean = this.rows.map((i) => mean(this.cols.map((j) => value(i, j))));
      const colMean = this.cols.map((j) => mean(this.rows.map((i) => value(i, j))));
      this.rows.sort((a, b) => rowMean[b] - rowMean[a]);
      this.cols.sort((a, b) => colMean[b] - colMean[a]);
    }
    this.draw();
  }

  draw() {
    const { data } = this;
    const measure = this.canvas.getContext("2d");
    const labelW = widest(measure, data.models) + GAP + 4;
    const top = widest(measure, data.benchmarks) + GAP + 4;
    this.labelW = labelW;
    this.top = top;
    const width = labelW + this.cols.length * CELL_W + MARGIN;
    const height = top + this.rows.length * CELL_H + MARGIN;
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(width * dpr);
    this.canvas.height = Math.round(height * dpr);
    this.canvas.style.width = `${width}px`;
    this.canvas.style.height = `${height}px`;
    const ctx = this.canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, width, height);
    ctx.font = FONT;
    ctx.textBaseline = "middle";
    ctx.fillStyle = "#343a40";
    ctx.textAlign = "right";
    // the labels as drawn (canvas text cannot be read back): what tests and tools can check
    this.drawn = { rows: this.rows.map((i) => data.models[i]), cols: [] };
    this.drawn.rows.forEach((label, r) => {
      ctx.fillText(label, labelW - GAP, top + r * CELL_H + CELL_H / 2);
    });
    ctx.save();
    ctx.textAlign = "left";
    this.cols.forEach((j, c) => {
      ctx.save();
      ctx.translate(labelW + c * CELL_W + CELL_W / 2, top - GAP);
      ctx.rotate(-Math.PI / 2);
      const label = data.benchmarks[j];
      this.drawn.cols.push(label);
      ctx.fillText(label, 0, 0);
      ctx.restore();
    });
    ctx.restore();
    this.rows.forEach((i, r) => {
      this.cols.forEach((j, c) => {
        const obs = data.observed[i][j];
        const pred = data.predicted[i][j];
        let fill = "#eef0f2";
        if (obs !== null && this.mode !== "predicted") fill = colour(this.norm[j](obs));
        else if (pred !== null && this.mode !== "observed") {
          fill = colour(this.norm[j](pred), PREDICTED_FADE);
        }
        ctx.fillStyle = fill;
        ctx.fillRect(labelW + c * CELL_W, top + r * CELL_H, CELL_W - 1, CELL_H - 1);
      });
    });
    ctx.strokeStyle = SUSPICIOUS_COLOUR;
    ctx.lineWidth = 1.5;
    for (const flag of this.flags.values()) {
      const r = this.rows.indexOf(data.models.indexOf(flag.model));
      const c = this.cols.indexOf(data.benchmarks.indexOf(flag.benchmark));
      if (r < 0 || c < 0) continue;
      ctx.strokeRect(labelW + c * CELL_W - 0.25, top + r * CELL_H - 0.25, CELL_W - 0.5, CELL_H - 0.5);
    }
    if (this.selected) {
      const r = this.rows.indexOf(data.models.indexOf(this.selected.model));
      const c = this.cols.indexOf(data.benchmarks.indexOf(this.selected.benchmark));
      if (r >= 0 && c >= 0) {
        ctx.strokeStyle = "#e8590c";
        ctx.lineWidth = 2;
        ctx.strokeRect(labelW + c * CELL_W - 1, top + r * CELL_H - 1, CELL_W + 1, CELL_H + 1);
      }
    }
  }

  cellAt(event) {
    const rect = this.canvas.getBoundingClientRect();
    const x = event.clientX - rect.left - this.labelW;
    const y = event.clientY - rect.top - this.top;
    const c = Math.floor(x / CELL_W);
    const r = Math.floor(y / CELL_H);
    if (x < 0 || y < 0 || c >= this.cols.length || r >= this.rows.length) return null;
    const i = this.rows[r];
    const j = this.cols[c];
    return { i, j, model: this.data.models[i], benchmark: this.data.benchmarks[j] };
  }

  /** Page coordinates of a cell's centre (for tests and keyboard users). */
  cellCentre(model, benchmark) {
    const r = this.rows.indexOf(this.data.models.indexOf(model));
    const c = this.cols.indexOf(this.data.benchmarks.indexOf(benchmark));
    if (r < 0 || c < 0) return null;
    return { x: this.labelW + c * CELL_W + CELL_W / 2, y: this.top + r * CELL_H + CELL_H / 2 };
  }

  hover(event) {
    const cell = this.cellAt(event);
    if (!cell) {
      this.tooltip.hidden = true;
      return;
    }
    const { data } = this;
    const obs = data.observed[cell.i][cell.j];
    const pred = data.predicted[cell.i][cell.j];
    const named = (name, id) => (name && name !== id ? `${name} (${id})` : id);
    const flag = this.flags.get(`${cell.model}\u0000${cell.benchmark}`);
    this.tooltip.replaceChildren(
      el("strong", { text: named(data.model_names[cell.i], cell.model) }),
      el("div", { text: named(data.benchmark_names[cell.j], cell.benchmark) }),
      el("div", { text: obs !== null ? `observed ${fmt(obs)}` : "not observed" }),
      el("div", { class: "muted", text: pred !== null ? `fit ${fmt(pred)}` : "not in the fit" }),
      flag
        ? el("div", {
            class: "suspicious",
            text:
              flag.reason === "mixed scale"
                ? "suspicious: this column mixes scales (fractions or distances beside percents)"
                : `suspicious: z = ${fmt(flag.z, 1)} (leave-one-out prediction ` +
                  `${fmt(flag.predicted)})`,
          })
        : null,
    );
    const box = this.container.getBoundingClientRect();
    this.tooltip.style.left = `${event.clientX - box.left + 14}px`;
    this.tooltip.style.top = `${event.clientY - box.top + 14}px`;
    this.tooltip.hidden = false;
  }

  select(model, benchmark) {
    this.selected = { model, benchmark };
    this.draw();
    this.onSelect(model, benchmark);
  }
}
