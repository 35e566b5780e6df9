// The Runs tab: the team's checkpoint runs over training steps (the view is runs.js).

import { RunsView } from "./runs.js";

let runs = null;

export default {
  name: "runs",
  label: "Runs",
  init(page) {
    runs = new RunsView({
      version: () => page.version(),
      level: () => page.state.level,
      benchmark: (id) => page.state.benchmarks.get(id),
      toolName: (format, tool) => page.toolLabel(format, tool),
      onChange: () => page.updateUrl(),
    });
    runs.bind();
  },
  readUrl(params, active) {
    if (active) runs.readUrl(params);
  },
  query: (active) => (active ? runs.query() : {}),
  show: () => runs.show(),
  versionChanged: () => runs.versionChanged(),
  levelChanged(active) {
    if (active) runs.load();
  },
  resized: () => runs.render(),
};
