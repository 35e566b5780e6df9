"""Completion methods. `complete_matrix` (predictor.completion) picks one by name."""
