"""Identity resolution: source-native model and benchmark names -> canonical ids.

- `rules.py`: per-source name grammars -> (base, snapshot date, setting), exact rewrites only;
- `settings.py`: the one spelling of a setting (`thinking-32k`, `high`, `nothinking` ...);
- `catalogue.py` + `models.csv`: the reviewed model catalogue and the model-id grammar;
- `registry.py`: loads and checks the CSV tables (benchmarks, aliases, catalogue);
- `resolve.py`: `resolve(scores, registry)`, the normalized frame with routes and reasons;
- `checks.py`: the unresolved-share gate for frontier sources.
"""
