"""`python -m benchpress`: the `benchpress` command (`python -m benchpress app` = the web page)."""

from predictor.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
