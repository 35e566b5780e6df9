# benchpress-llm: `make demo` and `make test` work on a fresh clone with Python 3.11+ and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# State lives in BENCHPRESS_HOME when set, else the user's data directory (platformdirs), so
# `make demo` and a later `.venv/bin/benchpress ...` from any folder see the same snapshots.
DEMO_SCORES := gpqa_diamond=80,hle=20,mmlu_pro=80,arc_agi_1=60,codeforces_rating=1800

.PHONY: install demo team-demo test lint format docs docs-data screenshot dagster bundle clean app browser-deps

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[pipeline,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/benchpress refresh --mode replay
	$(BIN)/benchpress snapshots list
	$(BIN)/benchpress predict --scores $(DEMO_SCORES)

# The team set-up on one machine: local PostgreSQL and S3-compatible servers, two homes
# refreshing one DuckLake warehouse on the Dagster-on-PostgreSQL profile, a shared s3://
# snapshot store, a prediction from it; the servers are stopped at the end (docs/operations.md).
team-demo: $(STAMP)
	$(BIN)/python -m pipelines.team.demo

# The suite on every core; a test file stays on one worker (its module fixtures are built once).
TEST_WORKERS ?= auto
test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

# ruff, then the import contracts of pyproject.toml: the packages' layers, no import circles
# (--no-cache: a cache from before modules moved reports imports the files no longer have)
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The documentation site (docs/, mkdocs.yml) into site/; --strict: a broken link, a missing page
# or a docstring the API reference cannot render fails the build. Builds offline. The method
# page's plots are drawn during the build (docs/hooks/figures.py) from the evaluation results
# in docs/assets/data/; results older than the data they were run on fail the build.
docs: $(STAMP) screenshot
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# Rerun the evaluations behind the method page's plots (about 10 min on 2 quiet cores).
docs-data: $(STAMP)
	$(BIN)/python docs/hooks/evaluate_runs.py

# The web page screenshot of the README and the docs (docs/assets/web-page.png), retaken by
# `make docs` from `benchpress app` on a free loopback port with the bundled snapshot, in
# headless Chromium (`make browser-deps`).
screenshot: $(STAMP)
	$(BIN)/python docs/hooks/screenshot.py

# The Dagster UI on the code location (lineage, runs, checks, the daily schedule).
# `make dagster PORT=3001` for another port than 3000 (e.g. beside a running one).
dagster: $(STAMP)
	$(BIN)/python -m pipelines.ui $(if $(PORT),--port '$(PORT)')  # webserver + daemon, location "benchpress"

# The local web page on http://127.0.0.1:8765 (predict, compare, matrix, fit plots).
app: $(STAMP)
	$(BIN)/benchpress app

# Debian's headless Chromium + chromedriver for the browser tests in tests/web (needs root;
# .ci/run calls it). Nothing is downloaded by Selenium itself.
browser-deps:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then \
	  echo "chromium and chromedriver present"; \
	else \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; \
	fi

# Rebuild the snapshot bundled in the package from the recorded payloads.
bundle: $(STAMP)
	$(BIN)/python -m pipelines.bundle
	$(BIN)/python -m pipelines.bundle_pretrained  # microsoft/benchpress-v1: the paper matrix

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .import_linter_cache test-artifacts site
