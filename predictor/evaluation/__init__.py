"""The paper's evaluation protocols (`protocols`) and the future-model split (`future`).

`predictor.evaluation` keeps the protocols' names (`per_model_folds`, ...) as before the
package existed."""

from predictor.util.lazy import moved_module_exports

# the old module's names, imported on first use (a light submodule loads nothing heavy)
__getattr__ = moved_module_exports(__name__, "predictor.evaluation.protocols", globals())
