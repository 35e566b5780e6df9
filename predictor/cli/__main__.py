"""`python -m predictor.cli`: the `benchpress` command."""

from predictor.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
