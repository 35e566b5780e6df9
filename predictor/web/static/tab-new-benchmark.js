// The New benchmark tab: a team's own benchmark, scored on a few known models, predicted for
// every model of the snapshot (the view is new_benchmark.js).

import { NewBenchmarkView } from "./new_benchmark.js";

let view = null;

export default {
  name: "new-benchmark",
  label: "New benchmark",
  init(page) {
    view = new NewBenchmarkView({
      version: () => page.version(),
      level: () => page.state.level,
      onChange: () => page.updateUrl(),
    });
    view.bind();
  },
  readUrl(params, active) {
    if (active) view.readUrl(params);
  },
  query: (active) => (active ? view.query() : {}),
  show: () => view.show(),
  versionChanged: () => view.versionChanged(),
  levelChanged(active) {
    if (active) view.load();
  },
};
