"""A value refused by its option's type, and a file given where a folder is wanted, are one
line on stderr (no usage block above them)."""

import gzip

import pytest

from attnlab.cli import main


def refused(capsys, *args):
    with pytest.raises(SystemExit) as exit:
        main(list(args))
    assert exit.value.code == 2
    return capsys.readouterr().err.splitlines()


def test_a_number_out_of_range_is_one_line(capsys):
    assert refused(capsys, "translate", "--run", "r", "--beta", "1e308") == [
        "attnlab translate: error: argument --beta: must be from 0 to 10, got '1e308'"]


@pytest.mark.parametrize("command", [
    ["data", "multi30k-long", "--dest", "out"],
    ["data", "multi30k", "--dest", "out"],
])
def test_a_file_given_to_from_is_named_as_a_file(command, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    given = tmp_path / "train.de.gz"
    with gzip.open(given, "wt") as file:
        file.write("Ein Hund .\n")
    assert main([*command, "--from", str(given)]) != 0
    err = capsys.readouterr().err
    assert f"--from {given} is a file; --from wants the folder" in err
    assert not (tmp_path / "out").exists()


def test_an_option_that_takes_one_value_refuses_a_second(capsys):
    """`explain --run A --run B` used to explain B alone without a word."""
    for argv in (["explain", "--run", "a", "--run", "b", "x"],
                 ["export", "--run", "a", "--run", "b", "--output", "o"],
                 ["train", "dates-bahdanau", "--run", "a", "--run", "b"],
                 ["explain", "--run", "a", "--target", "t", "--target", "u", "x"]):
        with pytest.raises(SystemExit) as stopped:
            main(argv)
        assert stopped.value.code == 2
        error = capsys.readouterr().err
        assert "given twice (a and b)" in error or "given twice (t and u)" in error, error
