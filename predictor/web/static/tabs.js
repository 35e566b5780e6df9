// The page's tabs, in the order of their buttons; the first is the page's default. A tab is a
// module `tab-NAME.js` whose default export describes it, plus its import and entry here;
// app.js makes its button (and its section, unless index.html has it) and calls its hooks.
// `name` and `label` are required, every hook is optional:
//
//   name        `?view=NAME`, the button's `data-view`, the `<section id="view-NAME">`
//   label       the button's text (and the aria-label of a section the page makes)
//   section()   the section's content, built with dom.js' el(), for a tab whose section is
//               not in index.html: the page adds `<section id="view-NAME" class="view">`
//   init(page)  once, first: bind the tab's controls; `page` is the shell (`page` in app.js)
//   readUrl(params, active)   the tab's inputs from the link the page was opened with
//   query(active)   its parameters for the link ({} for none); `active`: it is the tab shown
//   start()     the first snapshot is loaded, before the first tab is shown
//   show()      the tab is shown (and again after another snapshot loads): load and draw
//   versionChanged()   another snapshot was chosen: forget what came from the old one
//   snapshotLoaded()   that snapshot is loaded (then the tab shown is shown again)
//   levelChanged(active)   the interval level changed
//   resized()   the window was resized while the tab is shown

import predict from "./tab-predict.js";
import probes from "./tab-probes.js";
import compare from "./tab-compare.js";
import newBenchmark from "./tab-new-benchmark.js";
import matrix from "./tab-matrix.js";
import fit from "./tab-fit.js";
import runs from "./tab-runs.js";

export const TABS = [
  predict,
  probes,
  compare,
  newBenchmark,
  matrix,
  fit,
  runs,
];
