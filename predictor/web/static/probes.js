// The probe picker: which benchmarks to run on a new model, under a cost budget, so that a
// target set (a use-case profile or chosen benchmarks) is predicted best. Wraps /api/probes
// (BenchPress.select_probes) and /api/profiles; every string goes in as text (dom.js).

import { el, clear, byId, fmt, chip, show } from "./dom.js";
import { getJSON } from "./api.js";

const CUSTOM = "custom";
const ALL = "all";

/** `coding_assistant` -> `Coding assistant`. */
export function profileLabel(name) {
  const words = String(name).replaceAll("_", " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

function listText(names) {
  return names.length ? names.join(", ") : "none";
}

/** How to run a picked probe: each harness's task that scores it, when known; `harnesses`:
 * the /api/harnesses list (a label and the step's column naming its task). */
function runWith(step, harnesses) {
  const tools = (harnesses || [])
    .map((h) => (step[h.task_column] ? `${h.label} ${step[h.task_column]}` : null))
    .filter(Boolean);
  if (!tools.length) return null;
  return el("span", { class: "run-with", text: `run: ${tools.join(" · ")}` });
}

export class ProbePicker {
  /**
   * version(): the version parameter (undefined = latest); benchmark(id): the snapshot's row
   * for a benchmark (name, scale, unit); onUse(ids): fill the score form; onChange(): the URL.
   */
  constructor({ version, benchmark, onUse, onChange }) {
    this.version = version;
    this.benchmark = benchmark;
    this.onUse = onUse;
    this.onChange = onChange;
    this.options = null; // /api/profiles answer
    this.harnesses = null; // /api/harnesses: the tools that run probes, as the page names them
    this.mode = null; // a profile name, CUSTOM or ALL (null: the server's default profile)
    this.custom = [];
    this.allow = [];
    this.answer = null;
    this.asked = null; // the last request (as the server understood it, if it could), for the URL
    this.pending = false; // a shared link asked for a pick on load
    this.seq = 0;
  }

  name(id) {
    return this.benchmark(id)?.name || id;
  }

  // ---------------------------------------------------------------------------- the URL
  /** Inputs from a shared link (`k`, `budget`, `targets`, `allowlist`). */
  readUrl(params) {
    const k = params.get("k");
    const budget = params.get("budget");
    const targets = (params.get("targets") || "").trim();
    this.allow = (params.get("allowlist") || "").split(",").map((s) => s.trim());
    this.allow = [...new Set(this.allow.filter(Boolean))];
    if (k) byId("picker-k").value = k;
    if (budget) byId("picker-budget").value = budget;
    if (targets === ALL) this.mode = ALL;
    else if (targets && !targets.includes(",") && /^[A-Za-z_ -]+$/.test(targets)) {
      this.mode = targets; // a profile name, checked against the list once it is loaded
    } else if (targets) {
      this.mode = CUSTOM;
      this.custom = [...new Set(targets.split(",").map((s) => s.trim()).filter(Boolean))];
    }
    this.pending = Boolean(k || budget || targets || this.allow.length);
    // the link's own settings stay in the URL until a pick replaces them, even if it fails
    this.asked = this.pending ? { k, budget, targets, allowlist: this.allow.join(",") } : null;
  }

  /** Query parameters for a shared link: the last pick as the server understood it, or the
   * settings of a pick that failed as they were given (so a link with an error keeps them). */
  query() {
    if (!this.asked) return {};
    return { ...this.asked };
  }

  // ------------------------------------------------------------------------ the options
  versionChanged() {
    this.pending = this.pending || Boolean(this.answer); // pick again on the new version
    this.options = null;
    this.answer = null;
    this.renderResult();
  }

  async load() {
    if (this.options) return;
    try {
      this.options = await getJSON("/api/profiles", { version: this.version() });
      if (!this.harnesses) this.harnesses = (await getJSON("/api/harnesses")).harnesses;
      this.renderOptions();
      this.error("");
    } catch (error) {
      this.error(error.message);
    }
  }

  /** Called when the view is shown: options, then the pick a shared link asked for. */
  async show() {
    await this.load();
    if (this.pending && this.options) {
      this.pending = false;
      await this.run();
    } else if (!this.answer && !this.seq) this.renderResult(); // the hint, not an empty panel
  }

  renderOptions() {
    const o = this.options;
    const k = byId("picker-k");
    k.max = String(o.max_k);
    if (!k.value) k.value = String(o.default_k);
    byId("picker-unit").textContent = o.cost_unit;
    byId("picker-cost-note").textContent = `Cost units: ${o.cost_note}.`;
    const known = o.profiles.map((p) => p.name);
    if (this.mode && this.mode !== CUSTOM && this.mode !== ALL && !known.includes(this.mode)) {
      // not a profile after all: let the server resolve it as a benchmark (or name the typo)
      this.custom = [this.mode];
      this.mode = CUSTOM;
    }
    if (!this.mode) this.mode = o.default_targets;
    const select = clear(byId("picker-targets"));
    for (const p of o.profiles) {
      select.append(
        el("option", {
          value: p.name,
          text: `${profileLabel(p.name)} (${plural(p.benchmarks.length, "benchmark")})`,
        }),
      );
    }
    select.append(el("option", { value: CUSTOM, text: "Benchmarks I choose…" }));
    const count = Object.keys(o.costs).length;
    select.append(el("option", { value: ALL, text: `Every fitted benchmark (${count}, slow)` }));
    select.value = this.mode;
    byId("picker-default-note").textContent =
      `Starts from the ${profileLabel(o.default_targets)} profile: with every fitted benchmark ` +
      `(${count}) as a target the search takes several seconds per probe, with a profile ` +
      "about a second for five.";
    this.renderTargets();
    this.renderAllow();
  }

  cost(id) {
    return this.options?.costs?.[id];
  }

  /** A cost as people write it: `1`, `2.5`. */
  costText(value) {
    return value === undefined || value === null ? "?" : String(Math.round(value * 100) / 100);
  }

  renderTargets() {
    const o = this.options;
    if (!o) return;
    const custom = this.mode === CUSTOM;
    show(byId("picker-custom"), custom);
    const about = byId("picker-target-list");
    const profile = o.profiles.find((p) => p.name === this.mode);
    if (profile) {
      let text = `Targets: ${listText(profile.benchmarks.map((b) => this.name(b)))}.`;
      if (profile.missing.length) text += ` Not in this snapshot's fit: ${listText(profile.missing)}.`;
      about.textContent = text;
    } else if (this.mode === ALL) {
      about.textContent =
        `Targets: all ${Object.keys(o.costs).length} fitted benchmarks. ` +
        "Expect a wait of several seconds per probe.";
    } else {
      about.textContent = "Targets: the benchmarks below (names or ids).";
    }
    byId("picker-custom-chips").replaceChildren(
      ...this.custom.map((id) =>
        chip(this.name(id), id, () => {
          this.custom = this.custom.filter((x) => x !== id);
          this.renderTargets();
        }),
      ),
    );
  }

  renderAllow() {
    byId("picker-allow-chips").replaceChildren(
      ...this.allow.map((id) =>
        chip(`${this.name(id)} · ${this.costText(this.cost(id))}`, id, () => {
          this.allow = this.allow.filter((x) => x !== id);
          this.renderAllow();
        }),
      ),
    );
    byId("picker-allow-note").textContent = this.allow.length
      ? `Only these ${plural(this.allow.length, "benchmark")} may be picked.`
      : "Any fitted benchmark may be picked.";
  }

  add(kind) {
    const input = byId(kind === "allow" ? "picker-allow-input" : "picker-custom-input");
    const names = input.value.split(",").map((s) => s.trim()).filter(Boolean);
    if (!names.length) return;
    const list = kind === "allow" ? this.allow : this.custom;
    for (const name of names) if (!list.includes(name)) list.push(name);
    input.value = "";
    if (kind === "allow") this.renderAllow();
    else this.renderTargets();
  }

  error(message) {
    const node = byId("picker-error");
    node.textContent = message || "";
    node.hidden = !message;
  }

  // ---------------------------------------------------------------------------- the pick
  request() {
    const params = {
      k: byId("picker-k").value.trim(),
      budget: byId("picker-budget").value.trim(),
      allowlist: this.allow.join(","),
    };
    if (this.mode === CUSTOM) params.targets = this.custom.join(",");
    else if (this.mode) params.targets = this.mode;
    return params;
  }

  async run() {
    if (!this.options) await this.load();
    if (!this.options) return;
    if (this.mode === CUSTOM && !this.custom.length) {
      this.error("add at least one target benchmark, or choose a profile");
      return;
    }
    const params = this.request();
    const seq = ++this.seq;
    const button = byId("picker-run");
    button.disabled = true;
    byId("picker-use").disabled = true;
    byId("picker-result").classList.add("stale");
    byId("picker-summary").textContent =
      this.mode === ALL
        ? "Searching with every fitted benchmark as a target: this takes a while…"
        : "Searching…";
    const started = performance.now();
    try {
      const answer = await getJSON("/api/probes", { ...params, version: this.version() });
      if (seq !== this.seq) return;
      this.answer = answer;
      this.seconds = (performance.now() - started) / 1000;
      this.asked = {
        k: String(answer.k),
        budget: answer.budget === null ? null : String(answer.budget),
        targets: answer.profile || (this.mode === ALL ? ALL : answer.targets.join(",")),
        allowlist: answer.allowlist ? answer.allowlist.join(",") : null,
      };
      if (answer.profile) {
        this.mode = answer.profile; // e.g. typed as `Coding assistant`
        byId("picker-targets").value = answer.profile;
      } else if (this.mode === CUSTOM) this.custom = answer.targets.slice();
      if (answer.allowlist) this.allow = answer.allowlist.slice();
      this.renderTargets();
      this.renderAllow();
      this.error("");
      this.renderResult();
      this.onChange();
    } catch (error) {
      if (seq !== this.seq) return;
      this.asked = params; // what was asked, to fix in the link as well as in the form
      this.error(error.message);
      byId("picker-summary").textContent = "Fix the settings and pick again.";
      this.onChange();
    } finally {
      if (seq === this.seq) {
        button.disabled = false;
        byId("picker-use").disabled = !this.answer;
      }
    }
  }

  renderResult() {
    const table = byId("picker-table");
    const answer = this.answer;
    byId("picker-result").classList.remove("stale");
    byId("picker-use").disabled = !answer;
    if (!answer) {
      clear(table.tHead);
      clear(table.tBodies[0]);
      byId("picker-summary").textContent =
        "Pick k and a budget (and the targets to predict best), then press “Pick probes”: " +
        "the chosen probes, their cost and the expected error appear here.";
      byId("picker-note").textContent = "";
      return;
    }
    const unit = answer.cost_unit;
    const n = answer.benchmarks.length;
    const last = answer.expected_medae[n - 1];
    let targets = plural(answer.targets.length, "target");
    if (answer.profile) targets = `the ${profileLabel(answer.profile)} profile (${targets})`;
    else if (answer.targets.length <= 3) targets = answer.targets.map((b) => this.name(b)).join(", ");
    const budget = answer.budget === null ? "" : ` of a budget of ${this.costText(answer.budget)}`;
    byId("picker-summary").textContent =
      `${plural(n, "probe")} for ${targets} · total cost ${this.costText(answer.total_cost)}` +
      `${budget} ${unit} · expected error ${fmt(last, 2)} (no probe: ` +
      `${fmt(answer.baseline_medae, 2)}) · snapshot ${answer.version} · ` +
      `${fmt(this.seconds ?? 0, 1)} s`;
    const notes = [];
    if (n < answer.k) {
      notes.push(
        answer.budget !== null
          ? `The budget left room for ${n} of the ${answer.k} probes asked for.`
          : `Only ${n} of the ${answer.k} probes asked for could be picked.`,
      );
    }
    notes.push(
      "Expected error: the median absolute error of every observed target score in the " +
        "snapshot, each predicted from that model's scores on the chosen probes alone " +
        "(in-sample; in each target's own unit: points for percent benchmarks).",
    );
    byId("picker-note").textContent = notes.join(" ");

    table.tHead.replaceChildren(
      el(
        "tr",
        {},
        el("th", { class: "num", text: "Step" }),
        el("th", { text: "Probe" }),
        el("th", { class: "num", text: "Cost" }),
        el("th", { class: "num", text: "Cumulative" }),
        el("th", { text: "Expected error after this step" }),
      ),
    );
    const scale = Math.max(answer.baseline_medae || 0, ...answer.expected_medae) || 1;
    const bar = (value, kind) => {
      const fill = el("span", { class: `bar-fill ${kind}` });
      fill.style.width = `${Math.max(0, Math.min(100, (value / scale) * 100))}%`;
      return el(
        "span",
        { class: "bar-cell" },
        el("span", { class: "bar-track" }, fill),
        el("span", { class: "bar-value", text: fmt(value, 2) }),
      );
    };
    const rows = [
      el(
        "tr",
        { class: "baseline" },
        el("td", { class: "num muted", text: "0" }),
        el("td", { class: "muted", text: "no probe (every model from the prior)" }),
        el("td", { class: "num muted", text: "" }),
        el("td", { class: "num muted", text: "0" }),
        el("td", {}, bar(answer.baseline_medae, "baseline")),
      ),
    ];
    for (const step of answer.steps) {
      const meta = this.benchmark(step.benchmark);
      const open = meta && meta.scale === "unbounded" ? meta.unit : null;
      rows.push(
        el(
          "tr",
          { class: "picked", dataset: { benchmark: step.benchmark } },
          el("td", { class: "num", text: String(step.step) }),
          el(
            "td",
            {},
            el("span", { class: "bname", text: this.name(step.benchmark) }),
            el("span", { class: "bid", text: step.benchmark }),
            open ? el("span", { class: "unit", text: open }) : null,
            runWith(step, this.harnesses),
          ),
          el("td", { class: "num cost", text: this.costText(step.cost) }),
          el("td", { class: "num", text: this.costText(step.cumulative_cost) }),
          el("td", {}, bar(step.expected_medae, "picked")),
        ),
      );
    }
    table.tBodies[0].replaceChildren(...rows);
  }

  use() {
    if (this.answer) this.onUse(this.answer.benchmarks.slice());
  }

  bind() {
    byId("picker-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.run();
    });
    byId("picker-targets").addEventListener("change", (event) => {
      this.mode = event.target.value;
      this.renderTargets();
    });
    for (const kind of ["custom", "allow"]) {
      byId(`picker-${kind}-add`).addEventListener("click", () => this.add(kind));
      byId(`picker-${kind}-input`).addEventListener("keydown", (event) => {
        if (event.key === "Enter") {
          event.preventDefault();
          this.add(kind);
        }
      });
    }
    byId("picker-use").addEventListener("click", () => this.use());
  }
}
