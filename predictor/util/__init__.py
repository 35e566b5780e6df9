"""Small helpers every layer shares: paths, safe text, read limits, locks, progress, optional
extras and scratch space. They import nothing else from `predictor`."""
