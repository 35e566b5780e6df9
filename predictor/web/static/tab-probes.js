// The Pick probes tab: which benchmarks to run on a new model under a budget (the picker is
// probes.js); "Use these probes" hands them to the Predict tab's score form.

import { ProbePicker } from "./probes.js";
import { usePickedProbes } from "./tab-predict.js";

let picker = null;

export default {
  name: "probes",
  label: "Pick probes",
  init(page) {
    picker = new ProbePicker({
      version: () => page.version(),
      benchmark: (id) => page.state.benchmarks.get(id),
      onUse: (benchmarks) => usePickedProbes(benchmarks),
      onChange: () => page.updateUrl(),
    });
    picker.bind();
  },
  readUrl(params, active) {
    if (active) picker.readUrl(params);
  },
  query: (active) => (active ? picker.query() : {}),
  show: () => picker.show(),
  versionChanged: () => picker.versionChanged(),
};
