"""Published matrix snapshots: their layout, versions, reading and verifying, writing, the
stores that hold them and the pretrained snapshots shipped in the package.

`predictor.snapshots` keeps the reader's names (`SnapshotError`, `input_identity`, ...) as
before the package existed."""

from predictor.util.lazy import moved_module_exports

# the old module's names, imported on first use (a light submodule loads nothing heavy)
__getattr__ = moved_module_exports(__name__, "predictor.snapshots.reader", globals())
