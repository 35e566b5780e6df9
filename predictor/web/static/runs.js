// The Runs view: checkpoint runs kept with `benchpress track` (private, never published),
// each checkpoint's probe scores and the target benchmarks predicted from them, as a chart
// over training steps and a table. Wraps /api/runs and /api/runs/<run>; every run, model and
// benchmark name goes in as text (dom.js).

import { el, clear, byId, fmt, show } from "./dom.js";
import { getJSON } from "./api.js";
import { trajectoryChart, legend, PALETTE } from "./charts.js";
import { profileLabel } from "./probes.js";

const CUSTOM = "custom";
const OBSERVED_COLOR = "#868e96";

function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

export class RunsView {
  /**
   * version(): the version parameter (undefined = latest); level(): the interval level;
   * benchmark(id): the snapshot's row for a benchmark; toolName(format, tool): the tool
   * that wrote a results file, as people call it; onChange(): the URL.
   */
  constructor({ version, level, benchmark, toolName, onChange }) {
    this.version = version;
    this.level = level;
    this.benchmark = benchmark;
    this.toolName = toolName || ((format, tool) => String(tool || format || ""));
    this.onChange = onChange;
    this.runs = null; // /api/runs answer
    this.profiles = null; // /api/profiles answer (for the target chooser)
    this.run = null; // the chosen run's name
    this.targets = null; // a profile name, or CUSTOM (null: the server's default)
    this.custom = "";
    this.answer = null;
    this.seq = 0;
  }

  name(id) {
    return this.benchmark(id)?.name || id;
  }

  percent(id) {
    return this.benchmark(id)?.scale !== "unbounded";
  }

  // ---------------------------------------------------------------------------- the URL
  readUrl(params) {
    this.run = params.get("run") || null;
    const targets = (params.get("targets") || "").trim();
    if (targets && !targets.includes(",") && /^[A-Za-z_ -]+$/.test(targets)) {
      this.targets = targets;
    } else if (targets) {
      this.targets = CUSTOM;
      this.custom = targets;
    }
  }

  query() {
    return { run: this.run, targets: this.targetsParam() };
  }

  targetsParam() {
    if (this.targets === CUSTOM) return this.custom.trim() || null;
    return this.targets;
  }

  versionChanged() {
    this.profiles = null;
    this.answer = null;
  }

  error(message) {
    const node = byId("runs-error");
    node.textContent = message || "";
    node.hidden = !message;
  }

  // ------------------------------------------------------------------------ loading
  /** Called when the view is shown: the runs (re-read: `track` may have added some), then
   * the chosen run (the first one unless a link named another). */
  async show() {
    try {
      const [runs, profiles] = await Promise.all([
        getJSON("/api/runs"),
        this.profiles
          ? Promise.resolve(this.profiles)
          : getJSON("/api/profiles", { version: this.version() }),
      ]);
      this.runs = runs;
      this.profiles = profiles;
      this.error("");
    } catch (error) {
      this.error(error.message);
      return;
    }
    const names = this.runs.runs.map((r) => r.run);
    this.renderChooser();
    const empty = !names.length;
    show(byId("runs-empty"), empty);
    show(byId("run-controls"), !empty);
    show(byId("runs-body"), !empty);
    show(byId("runs-table-card"), !empty);
    if (empty) {
      byId("runs-command").textContent = this.runs.command;
      this.onChange();
      return;
    }
    if (!this.run || !names.includes(this.run)) {
      if (this.run) this.error(`no run named ${JSON.stringify(this.run)}; showing ${names[0]}`);
      this.run = names[0];
    }
    byId("run-select").value = this.run;
    await this.load();
  }

  renderChooser() {
    const select = clear(byId("run-select"));
    for (const r of this.runs.runs) {
      const steps =
        r.first_step === null ? "" : ` · steps ${r.first_step}–${r.last_step}`;
      select.append(
        el("option", {
          value: r.run,
          text: `${r.run} (${plural(r.checkpoints, "checkpoint")}${steps})`,
        }),
      );
    }
    const targets = clear(byId("run-targets"));
    for (const p of this.profiles.profiles) {
      targets.append(
        el("option", {
          value: p.name,
          text: `${profileLabel(p.name)} (${plural(p.benchmarks.length, "benchmark")})`,
        }),
      );
    }
    targets.append(el("option", { value: CUSTOM, text: "Benchmarks I choose…" }));
    if (!this.targets) this.targets = this.profiles.default_targets;
    const known = this.profiles.profiles.some((p) => p.name === this.targets);
    if (this.targets !== CUSTOM && !known) {
      this.custom = this.targets; // not a profile: let the server resolve it as a benchmark
      this.targets = CUSTOM;
    }
    targets.value = this.targets;
    show(byId("run-custom"), this.targets === CUSTOM);
    byId("run-custom-input").value = this.custom;
  }

  async load() {
    if (!this.run) return;
    const seq = ++this.seq;
    byId("runs-body").classList.add("stale");
    try {
      const answer = await getJSON(`/api/runs/${encodeURIComponent(this.run)}`, {
        targets: this.targetsParam(),
        level: this.level(),
        version: this.version(),
      });
      if (seq !== this.seq) return;
      this.answer = answer;
      if (answer.profile) {
        this.targets = answer.profile;
        byId("run-targets").value = answer.profile;
      }
      this.error("");
      this.render();
    } catch (error) {
      if (seq === this.seq) this.error(error.message);
    } finally {
      if (seq === this.seq) byId("runs-body").classList.remove("stale");
      this.onChange();
    }
  }

  // ------------------------------------------------------------------------ rendering
  /** One colour per benchmark, whether it is a target, a probe or both (a target observed at
   * a checkpoint is a diamond on its own line). */
  colors() {
    const colors = new Map();
    for (const b of [...this.answer.targets, ...this.answer.probes]) {
      if (!colors.has(b)) colors.set(b, PALETTE[colors.size % PALETTE.length]);
    }
    return colors;
  }

  /** The run's benchmarks, each shown once: a target observed at every checkpoint (a probe
   * throughout) is a probe, not a "predicted" line; a target observed at some checkpoints is
   * a target whose line marks those; the other probes are probes. */
  columns() {
    const a = this.answer;
    const probes = new Set(a.probes);
    const everywhereObserved = (b) =>
      probes.has(b) && a.checkpoints.every((c) => !c.predicted[b] || c.predicted[b].observed);
    const targets = a.targets.filter((b) => !everywhereObserved(b));
    const asTarget = new Set(targets);
    const partly = new Set(targets.filter((b) => probes.has(b)));
    return { targets, probes: a.probes.filter((b) => !asTarget.has(b)), partly };
  }

  render() {
    const a = this.answer;
    if (!a || byId("view-runs").hidden) return;
    const colors = this.colors();
    const { targets: allTargets, probes: allProbes, partly } = this.columns();
    const shownTargets = allTargets.filter((b) => this.percent(b));
    const shownProbes = allProbes.filter((b) => this.percent(b));
    const series = [
      ...shownTargets.map((b) => ({
        key: `target:${b}`,
        label: this.name(b),
        color: colors.get(b),
        kind: "target",
        points: a.checkpoints
          .filter((c) => c.predicted[b])
          .map((c) => {
            const p = c.predicted[b];
            return {
              x: c.step ?? 0,
              y: p.score,
              low: p.low,
              high: p.high,
              observed: p.observed,
              title: p.observed
                ? `${this.name(b)} at step ${c.step}: ${fmt(p.score)} (observed)`
                : `${this.name(b)} at step ${c.step}: ${fmt(p.score)} ` +
                  `[${fmt(p.low)} – ${fmt(p.high)}]`,
            };
          }),
      })),
      ...shownProbes.map((b) => ({
        key: `probe:${b}`,
        label: this.name(b),
        color: colors.get(b),
        kind: "probe",
        points: a.checkpoints
          .filter((c) => c.observed[b] !== undefined)
          .map((c) => ({
            x: c.step ?? 0,
            y: c.observed[b],
            title: `${this.name(b)} at step ${c.step}: ${fmt(c.observed[b])} (probe, observed)`,
          })),
      })),
    ];
    const pct = `${Math.round(a.level * 1000) / 10}%`;
    byId("run-legend").replaceChildren(
      legend([
        ...shownTargets.map((b) => ({
          label: partly.has(b)
            ? `${this.name(b)} (probe where run, else predicted with ${pct} band)`
            : `${this.name(b)} (predicted, ${pct} band)`,
          color: colors.get(b),
        })),
        ...shownProbes.map((b) => ({
          label: `${this.name(b)} (probe)`,
          color: colors.get(b),
          shape: "diamond",
        })),
        { label: "observed score (probe)", color: OBSERVED_COLOR, shape: "diamond" },
      ]),
    );
    trajectoryChart(byId("run-chart"), series, {
      ariaLabel: `run ${a.run}: scores over training steps`,
      xTitle: "training step",
      yTitle: "score (%)",
    });
    const open = [...allTargets, ...allProbes].filter((b) => !this.percent(b));
    const notes = [
      `${plural(a.checkpoints.length, "checkpoint")} of run ${a.run} · ` +
        `${plural(a.probes.length, "probe benchmark")} observed · ` +
        `${plural(allTargets.length, "target")} predicted by snapshot ${a.version}.`,
    ];
    if (a.total_checkpoints > a.checkpoints.length) {
      notes.push(
        `${a.checkpoints.length} of ${a.total_checkpoints} checkpoints shown, evenly spread.`,
      );
    }
    if (!a.probes.length) {
      notes.push(
        "No checkpoint has a score on a benchmark of this snapshot's fit: nothing to predict from.",
      );
    }
    if (open.length) {
      const names = [...new Set(open)].map((b) => this.name(b)).join(", ");
      notes.push(`Open-scale benchmarks (${names}) are in the table only.`);
    }
    byId("run-note").textContent = notes.join(" ");
    this.renderTable(colors, allTargets, allProbes, partly);
  }

  /** One column per benchmark: the probes, then the targets (a target observed at some
   * checkpoints shows "obs" there). */
  renderTable(colors, targets, probes, partly) {
    const a = this.answer;
    const table = byId("run-table");
    const head = (b, kind) =>
      el(
        "th",
        { class: "num", title: `${this.name(b)} (${b}), ${kind}` },
        el("span", { class: "dot", dataset: { color: colors.get(b) } }),
        el("span", { text: this.name(b) }),
        el("span", { class: "bid", text: kind }),
      );
    table.tHead.replaceChildren(
      el(
        "tr",
        {},
        el("th", { class: "num", text: "Step" }),
        el("th", { text: "Checkpoint" }),
        el("th", { text: "Scores from" }),
        probes.map((b) => head(b, "probe")),
        targets.map((b) => head(b, partly.has(b) ? "probe · predicted" : "predicted")),
      ),
    );
    for (const dot of table.tHead.querySelectorAll(".dot")) {
      dot.style.backgroundColor = dot.dataset.color;
    }
    table.tBodies[0].replaceChildren(
      ...a.checkpoints.map((c) =>
        el(
          "tr",
          { dataset: { step: String(c.step ?? "") } },
          el("td", { class: "num", text: c.step === null ? "—" : String(c.step) }),
          el("td", { class: "model-name", text: c.name }),
          this.sourcesCell(c),
          probes.map((b) =>
            el("td", {
              class: "num observed",
              text: c.observed[b] === undefined ? "—" : fmt(c.observed[b]),
              title: c.observed[b] === undefined ? null : this.scoreOrigin(c.provenance?.[b]),
            }),
          ),
          targets.map((b) => {
            const p = c.predicted[b];
            if (!p) return el("td", { class: "num muted", text: "—" });
            if (p.observed) {
              return el(
                "td",
                { class: "num observed", title: this.scoreOrigin(c.provenance?.[b]) || "observed" },
                el("span", { text: fmt(p.score) }),
                el("span", { class: "tag", text: "obs" }),
              );
            }
            return el(
              "td",
              {
                class: "num predicted",
                title: `${fmt(p.low)} – ${fmt(p.high)}`,
                dataset: { value: String(p.score) },
              },
              el("span", { text: fmt(p.score) }),
              el("span", { class: "pm", text: `±${fmt((p.high - p.low) / 2)}` }),
            );
          }),
        ),
      ),
    );
  }

  /** "lm-evaluation-harness 0.4.9.2": a source's tool and version, as text. */
  toolText(source) {
    return [this.toolName(source.format, source.tool), source.tool_version]
      .filter(Boolean)
      .join(" ");
  }

  /** "from task (metric) · tool version" for an observed score's tooltip. */
  scoreOrigin(facts) {
    if (!facts) return null;
    const task = facts.metric ? `${facts.task || ""} (${facts.metric})` : facts.task || "";
    return [task && `from ${task}`, this.toolText(facts)].filter(Boolean).join(" · ");
  }

  /** Where a checkpoint's scores came from: per file the tool and its version, the tasks
   * read, and when it was evaluated (else when it was stored); file name and sha256 in the
   * tooltip. */
  sourcesCell(c) {
    const sources = c.sources || [];
    if (!sources.length) return el("td", { class: "run-sources muted", text: "—" });
    return el(
      "td",
      { class: "run-sources" },
      sources.map((s) =>
        el(
          "div",
          {
            class: "run-source",
            title: [s.file, s.file_sha256 && `sha256 ${s.file_sha256}`]
              .filter(Boolean)
              .join(" · "),
          },
          el("span", { class: "tool", text: this.toolText(s) }),
          s.tasks.length
            ? el("span", { class: "tasks" }, el("code", { text: s.tasks.join(", ") }))
            : null,
          el("span", {
            class: "when muted",
            text: s.evaluated_at
              ? `evaluated ${String(s.evaluated_at).slice(0, 10)}`
              : c.added_at
                ? `stored ${String(c.added_at).slice(0, 10)}`
                : "",
          }),
        ),
      ),
    );
  }

  bind() {
    byId("run-select").addEventListener("change", (event) => {
      this.run = event.target.value;
      this.load();
    });
    byId("run-targets").addEventListener("change", (event) => {
      this.targets = event.target.value;
      show(byId("run-custom"), this.targets === CUSTOM);
      if (this.targets !== CUSTOM) this.load();
      else byId("run-custom-input").focus();
    });
    const custom = () => {
      this.custom = byId("run-custom-input").value;
      if (this.custom.trim()) this.load();
    };
    byId("run-custom-apply").addEventListener("click", custom);
    byId("run-custom-input").addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        custom();
      }
    });
  }
}
