"""Completion methods. `complete_matrix` (predictor.fit.completion) picks one by name."""
