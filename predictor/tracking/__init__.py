"""Checkpoint tracking: which step a results file belongs to and how likely a checkpoint
meets `--require` (`checkpoints`), the plot (`plot`) and the export to MLflow and W&B
(`export`).

`predictor.tracking` keeps the checkpoint functions' names as before the package existed."""

from predictor.util.lazy import moved_module_exports

# the old module's names, imported on first use (a light submodule loads nothing heavy)
__getattr__ = moved_module_exports(__name__, "predictor.tracking.checkpoints", globals())
