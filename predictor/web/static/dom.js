// DOM helpers. Every string from a leaderboard or a user goes in through textContent or
// setAttribute on a fixed attribute name: never innerHTML, never a style attribute (the
// Content-Security-Policy forbids inline styles anyway).

const SVG_NS = "http://www.w3.org/2000/svg";

function apply(node, props) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.setAttribute("class", value);
    else if (key === "text") node.textContent = String(value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (key === "value" || key === "checked" || key === "disabled" || key === "hidden") {
      node[key] = value;
    } else node.setAttribute(key, value === true ? "" : String(value));
  }
}

function appendAll(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** An HTML element: el("td", {class: "num", text: "80.0"}, ...children). */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  apply(node, props);
  appendAll(node, children);
  return node;
}

/** An SVG element, same calling convention as el(). */
export function svg(tag, props = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  apply(node, props);
  appendAll(node, children);
  return node;
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

export function byId(id) {
  return document.getElementById(id);
}

/** A number for people: one decimal for scores, more for small figures, "—" for none. */
export function fmt(value, digits = 1) {
  if (value === null || value === undefined || Number.isNaN(value)) return "—";
  return Number(value).toFixed(digits);
}

/** A score to show in a form or a link: at most 4 decimals (4 significant digits below 1), so
 * a stored 59.809999999999995 reads 59.81 and 152.4182891569458 reads 152.4183. */
export function scoreText(value) {
  const number = Number(value);
  if (!Number.isFinite(number)) return String(value);
  const text = Math.abs(number) >= 1 ? number.toFixed(4) : number.toPrecision(4);
  return String(Number(text));
}

/** Only http(s) URLs become links; anything else (javascript:, data:) stays plain text. */
export function safeUrl(text) {
  try {
    const url = new URL(String(text));
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
  } catch {
    return null;
  }
}

/** A link to a source, or the text alone when it is not a web URL. */
export function sourceLink(url, label, className = "prov-link") {
  const href = safeUrl(url);
  if (!href) return el("span", { class: "muted", text: label || String(url ?? "") });
  return el("a", {
    href,
    class: className,
    target: "_blank",
    rel: "noopener noreferrer",
    text: label || href,
  });
}

/** A removable chip: the label as text, a × button calling onRemove. */
export function chip(label, title, onRemove) {
  return el(
    "span",
    { class: "chip removable", title },
    el("span", { text: label }),
    el("button", { type: "button", "aria-label": `remove ${label}`, text: "×", onclick: onRemove }),
  );
}

export function show(node, visible) {
  node.hidden = !visible;
}

/** Show `message` in the element `id` (an inline error or warning); none hides it. */
export function showError(id, message) {
  const node = byId(id);
  node.textContent = message || "";
  node.hidden = !message;
}

/** An interval level for people: 0.9 -> "90%". */
export function pct(level) {
  return `${Math.round(level * 1000) / 10}%`;
}

/** fn, called once `ms` after the last call; `.cancel()` drops a pending call. */
export function debounce(fn, ms) {
  let timer = null;
  const debounced = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
  debounced.cancel = () => clearTimeout(timer);
  return debounced;
}
