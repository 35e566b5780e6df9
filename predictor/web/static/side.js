// The side information of a new model on the Predict tab: its name, and the family, release
// date and base model the fold-in uses, shown as chips filled from /api/side (the snapshot's
// own answer, `BenchPress.side_for`) and editable: an edited chip is sent as an override
// (`family`, `release_date`, `base`), × takes it back to automatic.

import { byId, debounce } from "./dom.js";
import { getJSON } from "./api.js";

const FIELDS = ["family", "release_date", "base"];
const INPUTS = { family: "side-family", release_date: "side-date", base: "side-base" };
const INFERRED = "inferred from the probes"; // predictor.values.DATE_INFERRED
const KNOWN = "known model";
const BASE = "base model";
const NAME = "name";

/** The one line a prediction's `side` gives (`SideUsed.describe`); "" when there is none. */
export function reasonText(side) {
  return side && typeof side.reason === "string" && side.reason ? side.reason : "";
}

/** "2025-04 ± 7 months" for a date inferred from the probes; "" when it has no value. */
function inferredText(side) {
  if (!side || side.release_date_source !== INFERRED || !side.release_date) return "";
  const months = Number(side.release_date_sd_months);
  const spread = Number.isFinite(months) ? ` ± ${Math.round(months)} months` : "";
  return `${String(side.release_date).slice(0, 7)}${spread}`;
}

export class SideInfo {
  /** `version()`: the snapshot asked for; `onChange()`: the inputs changed (predict again). */
  constructor({ version, onChange }) {
    this.version = version;
    this.onChange = onChange;
    this.auto = null; // the last /api/side answer: what "automatic" is for the name and base
    this.predicted = null; // the last prediction's `side` (an inferred date has a value there)
    this.overrides = { family: null, release_date: null, base: null };
    this.autoName = null; // a name put in the field by the page (a picked model, a file's)
    this.autoKind = null; // "model" or "file": where that name came from
    this.seq = 0;
    this.refreshSoon = debounce(() => this.refresh(), 300);
  }

  nameInput() {
    return byId("side-model");
  }

  name() {
    return this.nameInput().value.trim();
  }

  bind() {
    const name = this.nameInput();
    name.addEventListener("input", () => {
      this.predicted = null;
      this.refreshSoon();
    });
    name.addEventListener("change", () => {
      this.refresh();
      this.onChange();
    });
    for (const field of FIELDS) {
      const input = byId(INPUTS[field]);
      input.addEventListener("change", () => this.commit(field));
      input.addEventListener("keydown", (event) => {
        if (event.key === "Enter") {
          event.preventDefault(); // the chip, not the whole form
          this.commit(field);
        } else if (event.key === "Escape") {
          this.render(true);
        }
      });
      const reset = byId(`side-chip-${field}`).querySelector(".side-reset");
      reset.addEventListener("click", () => this.reset(field));
    }
  }

  /** What /api/predict is sent besides the scores: the name, and only the chips set by hand. */
  params() {
    const out = {};
    const name = this.name();
    if (name) out.model = name;
    for (const field of FIELDS) if (this.overrides[field]) out[field] = this.overrides[field];
    return out;
  }

  /** The link's parameters: the name (unless it is the picked model's, which `model` brings
   * back) and the chips set by hand, so the link reproduces the same prediction. */
  query() {
    const name = this.name();
    const implied = this.autoKind === "model" && name === this.autoName;
    return {
      model_name: name && !implied ? name : null,
      family: this.overrides.family,
      release_date: this.overrides.release_date,
      base: this.overrides.base,
    };
  }

  readUrl(params) {
    const name = (params.get("model_name") || "").trim();
    this.nameInput().value = name;
    for (const field of FIELDS) this.overrides[field] = (params.get(field) || "").trim() || null;
    if (name || FIELDS.some((f) => this.overrides[f])) byId("side-info").open = true;
    this.render();
  }

  /** Put `name` (a picked model's, a file's) in the name field, unless someone typed one. */
  fill(name, kind) {
    const text = String(name || "").trim();
    const current = this.name();
    if (!text || (current && current !== this.autoName)) return false;
    this.autoName = text;
    this.autoKind = kind;
    if (current === text) return false;
    this.nameInput().value = text;
    this.predicted = null;
    byId("side-info").open = true;
    this.refresh();
    return true;
  }

  /** The picked model or the file is gone: so is the name the page put in for it. */
  forget(kind) {
    if (this.autoKind !== kind) return false;
    const had = this.autoName !== null && this.name() === this.autoName;
    this.autoName = null;
    this.autoKind = null;
    if (!had) return false;
    this.nameInput().value = "";
    this.predicted = null;
    this.refresh();
    return true;
  }

  versionChanged() {
    this.predicted = null;
    return this.refresh();
  }

  /** The release dates the snapshot's fit can use (`[earliest, newest]`, or null when its fit
   * uses none): the date picker offers only those, and says so beside the chip. */
  setDateRange(range) {
    const input = byId(INPUTS.release_date);
    const [earliest, newest] = Array.isArray(range) ? range : [null, null];
    if (earliest) input.min = earliest;
    else input.removeAttribute("min");
    if (newest) input.max = newest;
    else input.removeAttribute("max");
    byId("side-date-range").textContent =
      earliest && newest ? `allowed ${earliest} to ${newest}` : "";
    input.title = earliest && newest ? `a date from ${earliest} to ${newest}` : "";
  }

  /** A prediction's `side`: what was used (an inferred date now has a value). */
  showPrediction(side) {
    this.predicted = side || null;
    this.render();
  }

  /** Ask the server what the name (and a base set by hand) give, before any prediction. */
  async refresh() {
    this.refreshSoon.cancel();
    const seq = ++this.seq;
    try {
      const answer = await getJSON("/api/side", {
        model: this.name() || undefined,
        base: this.overrides.base || undefined,
        version: this.version(),
      });
      if (seq !== this.seq) return;
      this.auto = answer;
      this.error("");
    } catch (error) {
      if (seq !== this.seq) return;
      this.auto = null;
      this.error(error.message);
    }
    this.render();
  }

  error(message) {
    const node = byId("side-error");
    node.textContent = message || "";
    node.hidden = !message;
  }

  commit(field) {
    const input = byId(INPUTS[field]);
    const value = input.value.trim();
    const before = this.overrides[field];
    if (!value) this.overrides[field] = null;
    else if (before === null && value === this.autoValue(field)) return;
    else this.overrides[field] = value;
    if (this.overrides[field] === before) return this.render(true);
    if (field === "base") {
      this.predicted = null;
      this.refresh();
    } else this.render(true);
    this.onChange();
  }

  reset(field) {
    if (this.overrides[field] === null) return;
    this.overrides[field] = null;
    if (field === "base") this.refresh();
    else this.render(true);
    this.onChange();
  }

  /** What a chip shows when not set by hand ("" for nothing yet). */
  autoValue(field) {
    const a = this.auto;
    if (!a) return "";
    if (field === "family") return a.family || "";
    if (field === "release_date") return a.release_date_source === INFERRED ? "" : a.release_date || "";
    return a.basis === BASE && a.derivation !== "given" ? a.base_model || "" : "";
  }

  /** Where a chip's automatic value comes from, in a few words. */
  autoSource(field) {
    const a = this.auto;
    if (!a) return "";
    const base = `base ${a.base_model}`;
    if (field === "family") {
      if (!a.family) return "none: no name, so the whole population";
      const from = a.basis === KNOWN ? "known model" : a.basis === BASE ? base : "from the name";
      return a.family_known ? from : `${from}; not in the fit, so the whole population`;
    }
    if (field === "release_date") {
      if (!a.release_date_source) return "not used by this snapshot's fit";
      if (a.release_date_source === INFERRED) {
        const shown = inferredText(this.predicted);
        return shown ? `inferred from the scores: ${shown}` : "inferred from the scores";
      }
      return a.basis === BASE ? `${base}, ${a.release_date_source}` : a.release_date_source;
    }
    if (a.basis === BASE) return a.derivation || "";
    if (a.basis === KNOWN) return "not needed: a known model";
    return "for a fine-tune, merge or quantisation";
  }

  /** Fill the chips; `force`: also the one being edited (after Enter, Escape or ×). */
  render(force = false) {
    const a = this.auto;
    for (const field of FIELDS) {
      const input = byId(INPUTS[field]);
      const chip = byId(`side-chip-${field}`);
      const given = this.overrides[field];
      const value = given ?? this.autoValue(field);
      if (force || document.activeElement !== input) input.value = value;
      let source = this.autoSource(field);
      if (given !== null) {
        const automatic = this.autoValue(field);
        source = input.value === given ? "set here" : `set here: ${given}`;
        if (automatic && automatic !== given) source += ` · automatic: ${automatic}`;
      }
      chip.dataset.state = given !== null ? "given" : value ? "auto" : "none";
      chip.querySelector(".side-reset").hidden = given === null;
      byId(`side-${field}-source`).textContent = source;
      chip.title = field === "release_date" && given === null && a?.note ? a.note : "";
    }
    byId("side-basis").textContent = this.basisText();
    byId("side-summary").textContent = this.summaryText();
  }

  basisText() {
    const a = this.auto;
    if (!a) return "";
    if (a.basis === KNOWN) return `A model of this snapshot: ${a.known_model}`;
    if (a.basis === BASE) return `Derived from ${a.base_model} (${a.derivation})`;
    if (a.basis === NAME) return "Not a model of this snapshot";
    return "";
  }

  /** The chips in a few words, for the summary line when the details are closed. */
  summaryText() {
    const family = this.overrides.family || this.autoValue("family");
    const date = this.overrides.release_date || this.autoValue("release_date");
    if (!this.name() && !family && !date && !this.overrides.base) return "";
    const parts = [family ? `family ${family}` : "no family"];
    parts.push(date ? `released ${date}` : "date inferred from the scores");
    return `· ${parts.join(", ")}`;
  }
}
