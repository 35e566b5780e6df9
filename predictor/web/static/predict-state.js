// What the Predict tab's modules share: the page shell, the side-information chips, the
// tab's state and the few actions one module asks of another (set by tab-predict.js), so the
// form, the report card, the results-file card and the known-model card stay apart.

export const ctx = {
  page: null, // the shell (app.js): the snapshot, the level, the URL, the other tabs
  side: null, // the model's name, family, release date and base (side.js)
  runPredict: async () => {}, // predict from the form as it is now
  setProbes: () => {}, // replace the form's rows: [{benchmark, score}]
  readProbes: () => [], // the form's rows as typed
  syncModelChecks: () => {}, // tick the known model's rows that are probes
  renderPrediction: () => {}, // draw the last prediction (or the empty card)
};

export const state = {
  model: null, // /api/models/<id> answer when the probes came from a known model
  upload: null, // /api/results answer when the probes came from a results file
  uploadFile: null, // that file (kept in the page only, to read another model of it)
  prediction: null,
  shareProbes: null, // probes of the last successful prediction, for the URL
  sort: { key: "score", dir: -1 },
  order: "category", // the report card's rows: "category" (grouped) or "score" (one list)
  collapsed: new Set(), // the groups folded away
  filter: "",
};

/** A benchmark's name for people (its id when the snapshot has none). */
export function benchmarkName(id) {
  return ctx.page.state.benchmarks.get(id)?.name || id;
}

/** " 2 benchmarks" with the plural right. */
export function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
