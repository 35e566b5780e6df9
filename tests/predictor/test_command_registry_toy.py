"""A command is its group module plus one `Command(...)` line: a toy command declared the same
way, for one block, is listed by `benchpress --help`, parsed and dispatched, with no other
module told about it (issue 39)."""

from __future__ import annotations

import argparse

import pytest

from predictor.cli import main
from predictor.cli.commands import COMMANDS, registered
from predictor.cli.options import Command, handler

TOY = Command("toy-greet", "greet someone (a toy command)", f"{__name__}:toy_arguments")


def toy_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", required=True, help="who to greet")
    parser.set_defaults(func=handler(f"{__name__}:cmd_toy"))


def cmd_toy(args: argparse.Namespace) -> int:
    print(f"hello, {args.name}")
    return 0


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--help"])
    assert exit_.value.code == 0
    return capsys.readouterr().out


def test_a_toy_command_is_listed_parsed_and_dispatched(capsys) -> None:
    with registered(TOY):
        listing = _help(capsys)
        assert "toy-greet" in listing and "greet someone (a toy command)" in listing
        assert "--name NAME  who to greet" in _help(capsys, "toy-greet")
        assert main(["toy-greet", "--name", "Ada"]) == 0
        assert capsys.readouterr().out == "hello, Ada\n"
    assert "toy-greet" not in _help(capsys)
    with pytest.raises(SystemExit):
        main(["toy-greet", "--name", "Ada"])
    assert "invalid choice: 'toy-greet'" in capsys.readouterr().err


def test_a_toy_command_cannot_take_a_name_already_declared() -> None:
    with (
        pytest.raises(ValueError, match=r"\['predict'\] are already declared"),
        registered(Command("predict", "again", TOY.arguments)),
    ):
        pass
    assert [c.name for c in COMMANDS].count("predict") == 1
