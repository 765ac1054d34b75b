"""A reader that goes away (`attnlab config list | head -1`) ends any command quietly with 0, as
cat does; a BrokenPipeError that is not standard output's stays an unexpected error."""

import os
import subprocess
import sys

import pytest

from attnlab import cli
from attnlab.cli import main


def closed_pipe_run(*argv: str) -> subprocess.CompletedProcess:
    """`attnlab ARGV` in its own process, writing into a pipe whose reader has already closed
    it (what `| head -1` becomes once head has its line)."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run([sys.executable, "-m", "attnlab", *argv], stdout=writer,
                              stderr=subprocess.PIPE, text=True, timeout=120, check=False)
    finally:
        os.close(writer)


@pytest.mark.slow
@pytest.mark.parametrize("argv", [("config", "list"), ("config", "show", "multi30k-luong-dot"),
                                  ("--help",), ("translate", "--help"), ("--version",)],
                         ids=" ".join)
def test_a_closed_pipe_ends_the_command_quietly(argv):
    result = closed_pipe_run(*argv)
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.slow
def test_the_same_commands_print_into_an_open_pipe():
    result = subprocess.run([sys.executable, "-m", "attnlab", "config", "list"],
                            capture_output=True, text=True, timeout=120, check=True)
    assert "multi30k-luong-dot" in result.stdout and result.stderr == ""


def test_another_broken_pipe_is_still_an_unexpected_error(monkeypatch, capsys):
    def broken(args):
        raise BrokenPipeError("a pipe to a child process")

    monkeypatch.setattr(cli.config, "run_list", broken)
    assert main(["config", "list"]) == 1
    assert capsys.readouterr().err == ("attnlab: error: unexpected BrokenPipeError: a pipe to a "
                                       "child process; run with --debug for the traceback\n")
