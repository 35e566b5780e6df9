// Small SVG charts drawn from data: points with interval bars, bars with a line, scatters.
// Labels go in through textContent (svg() helper), tooltips through <title> elements.

import { el, svg, clear, fmt } from "./dom.js";

export const PALETTE = [
  "#3b5bdb",
  "#e8590c",
  "#2b8a3e",
  "#ae3ec9",
  "#c92a2a",
  "#1098ad",
  "#f08c00",
  "#5c940d",
];
// the page's fixed colours: a probe (a score given), a prediction, a known model's own score
export const PROBE_COLOR = "#e8590c";
export const PREDICTED_COLOR = "#3b5bdb";
export const ACTUAL_COLOR = "#212529";

function linear([d0, d1], [r0, r1]) {
  const span = d1 - d0 || 1;
  return (v) => r0 + ((v - d0) / span) * (r1 - r0);
}

/** Round tick values covering [min, max]. */
export function ticks(min, max, count = 5) {
  if (!(max > min)) return [min];
  const raw = (max - min) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw) || raw;
  const out = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) {
    out.push(Math.round(v / step) * step);
  }
  return out;
}

function widthOf(container, fallback = 720) {
  return Math.max(320, Math.floor(container.clientWidth || fallback));
}

/**
 * Rows of points with interval bars on a shared 0–100 axis (percent benchmarks).
 * rows: [{label, title, values: [{score, low, high, observed}|null per series]}]
 * series: [{label, color}]. The axis sits in a sticky header above a scrolling body. Row
 * labels are shown whole: a long name wraps onto more lines and its row grows to hold them.
 * A row {heading, key} instead is a group's title across the chart (class `heading`).
 */
export function intervalChart(container, rows, series, options = {}) {
  clear(container);
  const width = widthOf(container) - 16; // room for the body's vertical scrollbar
  const labelWidth = Math.min(320, Math.max(150, Math.floor(width * 0.3)));
  const left = labelWidth + 12;
  const right = 18;
  const perSeries = series.length > 1 ? 9 : 0;
  const baseHeight = Math.max(20, 10 + perSeries * series.length);
  const domain = options.domain || [0, 100];
  const x = linear(domain, [left, width - right]);
  // a tick label every 45 px at least, so a phone's narrow axis stays readable
  const grid = ticks(domain[0], domain[1], Math.max(2, Math.min(10, (width - left) / 45)));

  const header = svg("svg", {
    width,
    height: 26,
    class: "chart-axis",
    role: "presentation",
  });
  for (const t of grid) {
    header.append(svg("text", { x: x(t), y: 17, "text-anchor": "middle", class: "tick", text: t }));
  }
  header.append(
    svg("text", {
      x: left - 8,
      y: 17,
      "text-anchor": "end",
      class: "axis-title",
      text: options.axisTitle || "score",
    }),
  );

  const body = svg("svg", {
    width,
    height: 0,
    class: "chart-body",
    role: "img",
    "aria-label": options.ariaLabel || "predicted scores with intervals",
  });
  // in the page before the rows are drawn: a label's lines are measured as they are drawn
  container.append(
    el("div", { class: "chart-head" }, header),
    el("div", { class: "chart-scroll" }, body),
  );
  let top = 3;
  for (const row of rows) {
    if (row.heading !== undefined) {
      const head = svg("g", { class: "heading", dataset: { key: row.key || "" } });
      head.append(
        svg("rect", { x: 0, y: top, width, height: HEADING_HEIGHT, class: "heading-bg" }),
        svg("text", { x: 6, y: top + HEADING_HEIGHT - 7, class: "heading-label" }),
      );
      body.append(head);
      const label = head.lastChild;
      label.textContent = String(row.heading);
      fitText(label, width - 12);
      top += HEADING_HEIGHT;
      continue;
    }
    const group = svg("g", { class: "row", dataset: { key: row.key || "" } });
    const background = svg("rect", { x: 0, width, class: "row-bg" });
    const label = svg("text", { x: labelWidth, "text-anchor": "end", class: "row-label" });
    group.append(background, label);
    body.append(group);
    const lines = wrapLabel(label, String(row.label ?? ""), labelWidth - 4);
    const rowHeight = Math.max(baseHeight, lines * LINE_HEIGHT + 8);
    const mid = top + rowHeight / 2;
    background.setAttribute("y", String(top));
    background.setAttribute("height", String(rowHeight));
    label.setAttribute("y", String(mid + 4 - ((lines - 1) * LINE_HEIGHT) / 2));
    const tips = [row.title || row.label];
    row.values.forEach((value, s) => {
      if (!value || value.score === null || value.score === undefined) return;
      const color = series[s].color;
      const y = series.length > 1 ? mid + (s - (series.length - 1) / 2) * perSeries : mid;
      const clamp = (v) => Math.min(domain[1], Math.max(domain[0], v));
      if (!value.observed && value.low !== null && value.high !== null) {
        group.append(
          svg("line", {
            x1: x(clamp(value.low)),
            x2: x(clamp(value.high)),
            y1: y,
            y2: y,
            stroke: color,
            class: "interval",
          }),
        );
        for (const end of [value.low, value.high]) {
          group.append(
            svg("line", {
              x1: x(clamp(end)),
              x2: x(clamp(end)),
              y1: y - 3,
              y2: y + 3,
              stroke: color,
              class: "cap",
            }),
          );
        }
      }
      const cx = x(clamp(value.score));
      if (value.observed) {
        group.append(
          svg("rect", {
            x: cx - 5,
            y: y - 5,
            width: 10,
            height: 10,
            fill: value.color || color,
            transform: `rotate(45 ${cx} ${y})`,
            class: "point observed",
          }),
        );
      } else {
        group.append(
          svg("circle", { cx, cy: y, r: 4.5, fill: value.color || color, class: "point" }),
        );
      }
      const name = series.length > 1 ? `${series[s].label}: ` : "";
      tips.push(
        value.observed
          ? `${name}${fmt(value.score)} (${options.observedWord || "observed"})`
          : `${name}${fmt(value.score)} [${fmt(value.low)} – ${fmt(value.high)}]`,
      );
    });
    group.append(svg("title", { text: tips.join("\n") }));
    top += rowHeight;
  }
  const height = top + 3;
  body.setAttribute("height", String(height));
  body.prepend(
    ...grid.map((t) => svg("line", { x1: x(t), x2: x(t), y1: 0, y2: height, class: "grid" })),
  );
}

const LINE_HEIGHT = 14; // px between the lines of a wrapped row label (12px text)
const HEADING_HEIGHT = 24; // a group's title row
const MAX_LINES = 4; // beyond this a label is cut with "…" (the row's tooltip has it whole)

/** Pieces a line may break after: words, and within a word too long for a line, after a
 * "-", "_", "/", "@" or "." (an id such as claude-sonnet-4.6@thinking-auto). */
function pieces(text) {
  return text
    .split(/\s+/)
    .filter(Boolean)
    .map((word) => word.match(/[^-_/@.]*[-_/@.]*/g).filter(Boolean));
}

/** Draw `text` into the SVG text `node` on as many lines (tspans) as it needs to fit
 * `maxWidth`, breaking at spaces first; returns the number of lines. One line stays plain
 * text (no tspan). */
function wrapLabel(node, text, maxWidth) {
  node.textContent = text;
  if (node.getComputedTextLength() <= maxWidth) return 1;
  node.textContent = "";
  const x = node.getAttribute("x");
  const lines = [];
  const line = () => {
    const span = svg("tspan", { x, dy: lines.length ? LINE_HEIGHT : 0 });
    node.append(span);
    lines.push(span);
    return span;
  };
  let current = line();
  const fits = (candidate) => {
    const before = current.textContent;
    current.textContent = candidate;
    const ok = current.getComputedTextLength() <= maxWidth;
    current.textContent = before;
    return ok;
  };
  for (const word of pieces(text)) {
    const space = current.textContent ? " " : "";
    if (fits(current.textContent + space + word.join(""))) {
      current.textContent += space + word.join("");
      continue;
    }
    if (current.textContent) current = line();
    for (const piece of word) {
      if (current.textContent && !fits(current.textContent + piece)) current = line();
      current.textContent += piece;
      // a piece wider than a whole line: break it between characters
      while (current.getComputedTextLength() > maxWidth && current.textContent.length > 1) {
        const full = current.textContent;
        let keep = full.length - 1;
        current.textContent = full.slice(0, keep);
        while (keep > 1 && current.getComputedTextLength() > maxWidth) {
          keep -= 1;
          current.textContent = full.slice(0, keep);
        }
        current = line();
        current.textContent = full.slice(keep);
      }
    }
  }
  if (lines.length > MAX_LINES) {
    const rest = lines.slice(MAX_LINES - 1).map((span) => span.textContent);
    for (const span of lines.splice(MAX_LINES)) span.remove();
    lines[MAX_LINES - 1].textContent = rest.join(" ");
    fitText(lines[MAX_LINES - 1], maxWidth);
  }
  return lines.length;
}

/** Shorten a drawn SVG label (with "…") until it fits `maxWidth` pixels: a character count
 * alone misjudges wide letters, and the start of a long name would be cut off at the edge. */
function fitText(node, maxWidth) {
  const full = node.textContent;
  let keep = full.length;
  while (keep > 1 && node.getComputedTextLength() > maxWidth) {
    keep -= 1;
    node.textContent = `${full.slice(0, keep)}…`;
  }
}

/** The fewest decimals that tell every tick of `values` apart (0.06, 0.065, 0.07: 3), so an
 * axis never repeats a label. */
export function tickDigits(values) {
  for (let digits = 0; digits < 8; digits += 1) {
    const labels = values.map((v) => fmt(v, digits));
    if (new Set(labels).size === labels.length) return digits;
  }
  return 8;
}

/** Singular values as bars, with the cumulative variance share as a line (right axis); the
 * first `rank` bars (the factors the fit keeps) are drawn darker. */
export function spectrumChart(container, spectrum, rank = 2) {
  clear(container);
  const width = widthOf(container, 480);
  const height = 260;
  const m = { left: 48, right: 48, top: 14, bottom: 34 };
  const values = spectrum.singular_values;
  const maxV = Math.max(...values);
  const y = linear([0, maxV], [height - m.bottom, m.top]);
  const yShare = linear([0, 1], [height - m.bottom, m.top]);
  const band = (width - m.left - m.right) / values.length;
  const chart = svg("svg", { width, height, role: "img", "aria-label": "singular value spectrum" });
  for (const t of ticks(0, maxV, 4)) {
    chart.append(
      svg("line", { x1: m.left, x2: width - m.right, y1: y(t), y2: y(t), class: "grid" }),
    );
    chart.append(
      svg("text", { x: m.left - 6, y: y(t) + 4, "text-anchor": "end", class: "tick", text: t }),
    );
  }
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    chart.append(
      svg("text", {
        x: width - m.right + 6,
        y: yShare(t) + 4,
        class: "tick share",
        text: `${t * 100}%`,
      }),
    );
  }
  const points = [];
  values.forEach((v, i) => {
    const x0 = m.left + i * band;
    const bar = svg("rect", {
      x: x0 + band * 0.18,
      y: y(v),
      width: band * 0.64,
      height: y(0) - y(v),
      class: i < rank ? "bar top" : "bar",
    });
    bar.append(
      svg("title", {
        text: `σ${i + 1} = ${fmt(v, 2)}; ${fmt(spectrum.variance_share[i] * 100, 1)}% of the variance`,
      }),
    );
    chart.append(bar);
    chart.append(
      svg("text", {
        x: x0 + band / 2,
        y: height - m.bottom + 16,
        "text-anchor": "middle",
        class: "tick",
        text: `σ${i + 1}`,
      }),
    );
    points.push(`${x0 + band / 2},${yShare(spectrum.cumulative_share[i])}`);
  });
  chart.append(svg("polyline", { points: points.join(" "), class: "share-line" }));
  spectrum.cumulative_share.forEach((share, i) => {
    const dot = svg("circle", {
      cx: m.left + i * band + band / 2,
      cy: yShare(share),
      r: 3,
      class: "share-dot",
    });
    dot.append(svg("title", { text: `top ${i + 1}: ${fmt(share * 100, 1)}% cumulative` }));
    chart.append(dot);
  });
  chart.append(
    svg("text", {
      x: m.left,
      y: height - 4,
      class: "axis-title",
      text: "singular value (bars) · cumulative share (line)",
    }),
  );
  container.append(chart);
}

/**
 * A scatter plot. points: [{x, y, color, title, label?}]; options: {xTitle, yTitle, diagonal,
 * zeroLines, square}. Points with `label` get a text label beside them.
 */
export function scatterChart(container, points, options = {}) {
  clear(container);
  const width = widthOf(container, 480);
  const height = options.square ? Math.min(width, 420) : 320;
  const m = { left: 52, right: 16, top: 14, bottom: 40 };
  const xs = points.map((p) => p.x);
  const ys = points.map((p) => p.y);
  let xDomain = [Math.min(...xs), Math.max(...xs)];
  let yDomain = [Math.min(...ys), Math.max(...ys)];
  if (options.diagonal) {
    const lo = Math.min(xDomain[0], yDomain[0]);
    const hi = Math.max(xDomain[1], yDomain[1]);
    xDomain = [lo, hi];
    yDomain = [lo, hi];
  }
  const pad = (d) => {
    const span = d[1] - d[0] || 1;
    return [d[0] - span * 0.06, d[1] + span * 0.06];
  };
  xDomain = pad(xDomain);
  yDomain = pad(yDomain);
  const x = linear(xDomain, [m.left, width - m.right]);
  const y = linear(yDomain, [height - m.bottom, m.top]);
  const chart = svg("svg", {
    width,
    height,
    role: "img",
    "aria-label": options.ariaLabel || "scatter plot",
  });
  const xTicks = ticks(xDomain[0], xDomain[1], 6);
  const yTicks = ticks(yDomain[0], yDomain[1], 6);
  const xDigits = tickDigits(xTicks);
  const yDigits = tickDigits(yTicks);
  for (const t of xTicks) {
    chart.append(
      svg("line", { x1: x(t), x2: x(t), y1: m.top, y2: height - m.bottom, class: "grid" }),
    );
    chart.append(
      svg("text", {
        x: x(t),
        y: height - m.bottom + 15,
        "text-anchor": "middle",
        class: "tick",
        text: fmt(t, xDigits),
      }),
    );
  }
  for (const t of yTicks) {
    chart.append(
      svg("line", { x1: m.left, x2: width - m.right, y1: y(t), y2: y(t), class: "grid" }),
    );
    chart.append(
      svg("text", {
        x: m.left - 6,
        y: y(t) + 4,
        "text-anchor": "end",
        class: "tick",
        text: fmt(t, yDigits),
      }),
    );
  }
  if (options.zeroLines) {
    if (xDomain[0] < 0 && xDomain[1] > 0) {
      chart.append(
        svg("line", { x1: x(0), x2: x(0), y1: m.top, y2: height - m.bottom, class: "zero" }),
      );
    }
    if (yDomain[0] < 0 && yDomain[1] > 0) {
      chart.append(
        svg("line", { x1: m.left, x2: width - m.right, y1: y(0), y2: y(0), class: "zero" }),
      );
    }
  }
  if (options.diagonal) {
    chart.append(
      svg("line", {
        x1: x(xDomain[0]),
        y1: y(xDomain[0]),
        x2: x(xDomain[1]),
        y2: y(xDomain[1]),
        class: "diagonal",
      }),
    );
  }
  for (const p of points) {
    const dot = svg("circle", {
      cx: x(p.x),
      cy: y(p.y),
      r: options.radius || 4,
      fill: p.color || PALETTE[0],
      class: "dot",
    });
    if (p.title) dot.append(svg("title", { text: p.title }));
    chart.append(dot);
  }
  chart.append(...axisTitles(m, width, height, options.xTitle || "", options.yTitle || ""));
  container.append(chart); // in the page, so the point labels are measured as drawn
  const placed = []; // label boxes already drawn: a label that would overlap one is left out
  for (const p of points.filter((q) => q.label)) {
    // the whole name, on whichever side of its point it fits, or none (its tooltip names it)
    const node = svg("text", { y: y(p.y) + 4, class: "point-label", text: String(p.label) });
    chart.append(node);
    const w = node.getComputedTextLength();
    const sides = x(p.x) > width * 0.6 ? [-1, 1] : [1, -1];
    const box = sides
      .map((side) => {
        const x0 = side > 0 ? x(p.x) + 7 : x(p.x) - 7 - w;
        return { side, x0: x0 - 2, x1: x0 + w + 2, y0: y(p.y) - 8, y1: y(p.y) + 8 };
      })
      .find(
        (b) =>
          b.x0 >= m.left &&
          b.x1 <= width - m.right &&
          !placed.some((o) => b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1),
      );
    if (!box) {
      node.remove();
      continue;
    }
    placed.push(box);
    node.setAttribute("x", String(box.side > 0 ? x(p.x) + 7 : x(p.x) - 7));
    node.setAttribute("text-anchor", box.side > 0 ? "start" : "end");
  }
}

/** The x title under the plot area and the y title turned along its left edge. */
function axisTitles(m, width, height, xTitle, yTitle) {
  const middle = (m.top + height - m.bottom) / 2;
  return [
    svg("text", {
      x: (m.left + width - m.right) / 2,
      y: height - 6,
      "text-anchor": "middle",
      class: "axis-title",
      text: xTitle,
    }),
    svg("text", {
      x: 14,
      y: middle,
      "text-anchor": "middle",
      class: "axis-title",
      transform: `rotate(-90 14 ${middle})`,
      text: yTitle,
    }),
  ];
}

/** A colour legend: [{label, color, shape}] as a row of swatches. */
export function legend(items) {
  return el(
    "div",
    { class: "legend" },
    items.map((item) => {
      const swatch = svg("svg", { width: 14, height: 14, class: "swatch" });
      if (item.shape === "diamond") {
        swatch.append(
          svg("rect", {
            x: 3,
            y: 3,
            width: 8,
            height: 8,
            fill: item.color,
            transform: "rotate(45 7 7)",
          }),
        );
      } else if (item.shape === "square") {
        swatch.append(svg("rect", { x: 1, y: 1, width: 12, height: 12, fill: item.color }));
      } else {
        swatch.append(svg("circle", { cx: 7, cy: 7, r: 5, fill: item.color }));
      }
      return el("span", { class: "legend-item" }, swatch, el("span", { text: item.label }));
    }),
  );
}

/**
 * Trajectories over training steps: one line per target with its interval band, and the
 * observed probe scores as diamonds. series: [{key, label, color, kind: "target" | "probe",
 * points: [{x, y, low, high, observed, title}]}] (y on 0–100; a target's observed points are
 * diamonds too). Each series is one `g.series` element.
 */
export function trajectoryChart(container, series, options = {}) {
  clear(container);
  const width = widthOf(container, 720);
  const height = options.height || 340;
  const m = { left: 52, right: 20, top: 14, bottom: 42 };
  const xs = series.flatMap((s) => s.points.map((p) => p.x));
  let xDomain = xs.length ? [Math.min(...xs), Math.max(...xs)] : [0, 1];
  if (xDomain[0] === xDomain[1]) xDomain = [xDomain[0] - 1, xDomain[1] + 1];
  const span = xDomain[1] - xDomain[0];
  xDomain = [xDomain[0] - span * 0.03, xDomain[1] + span * 0.03];
  const yDomain = options.domain || [0, 100];
  const x = linear(xDomain, [m.left, width - m.right]);
  const y = linear(yDomain, [height - m.bottom, m.top]);
  const clamp = (v) => Math.min(yDomain[1], Math.max(yDomain[0], v));
  const chart = svg("svg", {
    width,
    height,
    class: "trajectory",
    role: "img",
    "aria-label": options.ariaLabel || "scores over training steps",
  });
  for (const t of ticks(yDomain[0], yDomain[1], 5)) {
    chart.append(
      svg("line", { x1: m.left, x2: width - m.right, y1: y(t), y2: y(t), class: "grid" }),
      svg("text", { x: m.left - 6, y: y(t) + 4, "text-anchor": "end", class: "tick", text: t }),
    );
  }
  const whole = xs.length && xs.every((v) => Number.isInteger(v));
  for (const t of ticks(xDomain[0], xDomain[1], 6)) {
    if (whole && !Number.isInteger(t)) continue;
    chart.append(
      svg("line", { x1: x(t), x2: x(t), y1: m.top, y2: height - m.bottom, class: "grid" }),
      svg("text", {
        x: x(t),
        y: height - m.bottom + 15,
        "text-anchor": "middle",
        class: "tick",
        text: Math.abs(t) >= 10000 ? t.toExponential(1) : String(t),
      }),
    );
  }
  for (const s of series) {
    const group = svg("g", { class: `series ${s.kind}`, dataset: { key: s.key } });
    const points = s.points.filter((p) => p.y !== null && p.y !== undefined);
    if (s.kind === "target") {
      const banded = points.filter((p) => p.low !== null && p.high !== null);
      if (banded.length) {
        const upper = banded.map((p) => `${x(p.x)},${y(clamp(p.high))}`);
        const lower = banded.map((p) => `${x(p.x)},${y(clamp(p.low))}`).reverse();
        group.append(
          svg("polygon", { points: [...upper, ...lower].join(" "), fill: s.color, class: "band" }),
        );
      }
      group.append(
        svg("polyline", {
          points: points.map((p) => `${x(p.x)},${y(clamp(p.y))}`).join(" "),
          stroke: s.color,
          class: "trend",
        }),
      );
    }
    for (const p of points) {
      const cx = x(p.x);
      const cy = y(clamp(p.y));
      const mark =
        s.kind === "probe" || p.observed
          ? svg("rect", {
              x: cx - 4,
              y: cy - 4,
              width: 8,
              height: 8,
              fill: s.color,
              transform: `rotate(45 ${cx} ${cy})`,
              class: "point observed",
            })
          : svg("circle", { cx, cy, r: 3.5, fill: s.color, class: "point" });
      mark.append(svg("title", { text: p.title || `${s.label}: ${fmt(p.y)}` }));
      group.append(mark);
    }
    chart.append(group);
  }
  chart.append(
    ...axisTitles(m, width, height, options.xTitle || "step", options.yTitle || "score (%)"),
  );
  container.append(chart);
}
