"""Fitting a snapshot's completer: the dense matrix, completion, calibration of new-model
intervals (and its cache), the fit as the pipeline does it, and a team's own matrix."""
