"""One command-line grammar: every command that reads a trained run spells its flags the same
way, refuses another task's run (where it reads one task's) first and in one sentence naming
the command that reads it,
says what it does, suggests the closest command for a misspelt one, and knows its version."""

import argparse

import pytest

import attnlab
from attnlab.cli import build_parser, main

# Each command, with a second mistake that would be reported if the task were not checked first
# (RUN: the run directory; OUT: an output in a folder that does not exist).
COMMANDS = {
    "translate": ["translate", "--run", "RUN", "--input", "OUT"],
    "evaluate": ["evaluate", "--run", "RUN", "--output", "OUT"],
    "plot": ["plot", "--run", "RUN", "Zwei Männer", "--output", "OUT"],
    "report": ["report", "--run", "RUN", "--output", "OUT"],
    "lm plot": ["lm", "plot", "--run", "RUN", "the cat", "--output", "OUT"],
    "caption predict": ["caption", "predict", "--run", "RUN", "image.png", "--output", "OUT"],
}
# (command, the kind of run it is given, what it reads, the command that reads that run)
WRONG_KIND = [
    ("translate", "captioning", "translation", "caption predict"),
    ("translate", "language-model", "translation", "evaluate"),
    ("caption predict", "translation", "captioning", "translate"),
    ("caption predict", "language-model", "captioning", "evaluate"),
]
RUN_FIXTURES = {"translation": "deen_run", "captioning": "caption_run",
                "language-model": "lm_run"}


def refusal(command, kind, request, tmp_path, capsys) -> tuple:
    """(the run, the one line of standard error) of `command` given a run of `kind`."""
    run = request.getfixturevalue(RUN_FIXTURES[kind])
    plots = (run / "plots").exists()
    out = tmp_path / "missing" / "out.png"
    argv = [str(run) if part == "RUN" else str(out) if part == "OUT" else part
            for part in COMMANDS[command]]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert (run / "plots").exists() == plots  # nothing was written into the run
    return run, out, captured.err


@pytest.mark.slow
@pytest.mark.parametrize(("command", "kind", "reads", "use"), WRONG_KIND)
def test_another_tasks_run_is_named_first_in_one_sentence(command, kind, reads, use, request,
                                                          tmp_path, capsys):
    run, _, err = refusal(command, kind, request, tmp_path, capsys)
    assert err == (f"attnlab: error: {run} is a {kind} run, not a {reads} run; use "
                   f"attnlab {use} --run {run}\n")


@pytest.mark.parametrize("kind", ["captioning", "language-model"])
def test_report_of_another_task_names_evaluate(kind, request, tmp_path, capsys):
    run, _, err = refusal("report", kind, request, tmp_path, capsys)
    assert err == (f"attnlab: error: {run} is a {kind} run, which has no HTML report; use "
                   f"attnlab evaluate --run {run}\n")


def test_lm_plot_of_a_captioning_run_says_what_it_reads(request, tmp_path, capsys):
    run, _, err = refusal("lm plot", "captioning", request, tmp_path, capsys)
    assert err == (f"attnlab: error: {run} holds a captioning model; expected a language model "
                   f"or a translation model with an LSTMN encoder\n")


@pytest.mark.parametrize("command", ["evaluate", "plot"])
@pytest.mark.parametrize("kind", sorted(RUN_FIXTURES))
def test_evaluate_and_plot_read_a_run_of_any_task(command, kind, request, tmp_path, capsys):
    # evaluate and plot read every task's run: the mistake left
    # is the output's, found before the run is loaded.
    _, out, err = refusal(command, kind, request, tmp_path, capsys)
    assert err.startswith(f"attnlab: error: cannot write {out}: its folder {out.parent} does "
                          f"not exist")


@pytest.mark.parametrize("argv", [["caption", "train"], ["caption", "evaluate"],
                                  ["caption", "plot"], ["lm", "train"], ["lm", "evaluate"]])
def test_the_older_spellings_are_gone(argv, capsys):
    # before the first release no command keeps a second name: attnlab train, evaluate, plot
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--help"])
    assert exit_info.value.code == 2
    assert f"unknown command {argv[1]!r}" in capsys.readouterr().err


def test_lm_plot_reads_a_translation_run(deen_run, capsys):
    # A translation run is not the wrong kind for lm plot (an LSTMN encoder is read): the
    # refusal is about its encoder.
    assert main(["lm", "plot", "--run", str(deen_run), "Zwei Männer"]) == 2
    assert "encoder has no self-attention" in capsys.readouterr().err


def walk(parser, path=("attnlab",)):
    """(command path, parser) of the parser and every sub-command under it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, (*path, name))


def test_every_command_says_what_it_does():
    commands = dict(walk(build_parser()))
    assert len(commands) > 20
    for path, parser in commands.items():
        assert parser.description and len(parser.description) > 20, " ".join(path)
        assert parser.description[0].isupper(), " ".join(path)


READERS = [("translate",), ("evaluate",), ("plot",), ("report",), ("lm", "plot"),
           ("caption", "predict")]
SHARED = {"--run": "DIR", "--checkpoint": None, "--device": "DEVICE", "--beam": "K",
          "--batch-size": "N", "--output": "FILE", "--quiet": None}


def test_commands_that_read_a_run_share_one_grammar():
    commands = {path[1:]: parser for path, parser in walk(build_parser())}
    seen = {}
    for path in READERS:
        options = {option: action for action in commands[path]._actions
                   for option in action.option_strings}
        for option in ("--run", "--checkpoint", "--device"):
            assert option in options, (path, option)
        for option, metavar in SHARED.items():
            if option not in options:
                continue
            action = options[option]
            assert action.metavar == metavar, (path, option)
            first = seen.setdefault(option, (path, action))[1]
            assert (action.choices, action.default, action.type) == (
                first.choices, first.default, first.type), (path, option)
    assert seen["--checkpoint"][1].choices == ("best", "last")
    assert "best, else last" in seen["--checkpoint"][1].help
    # progress bars can be turned off wherever there is a long job
    for path in [("translate",), ("evaluate",), ("report",), ("compare",)]:
        assert any("--quiet" in action.option_strings for action in commands[path]._actions)


def test_plot_help_points_to_the_reading_figure(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["plot", "--help"])
    assert exit_info.value.code == 0
    assert "attnlab lm plot --run DIR SENTENCE" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(("argv", "error"), [
    (["tranlsate"], "attnlab: error: unknown command 'tranlsate'; did you mean 'translate'?"),
    (["evalaute", "--run", "x"],
     "attnlab: error: unknown command 'evalaute'; did you mean 'evaluate'?"),
    (["lm", "plto"], "attnlab lm: error: unknown command 'plto'; did you mean 'plot'?"),
    (["caption", "predcit"],
     "attnlab caption: error: unknown command 'predcit'; did you mean 'predict'?"),
    (["translate", "--run", "x", "--checkpoint", "bset"],
     "attnlab translate: error: argument --checkpoint: invalid choice 'bset'; did you mean "
     "'best'?"),
])
def test_a_misspelt_command_gets_the_closest_one(argv, error, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert captured.err == error + "\n" and captured.out == ""


def test_an_unknown_command_without_a_close_one_lists_them(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["zzz"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown command 'zzz'; choose from 'demo', " in err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"attnlab {attnlab.__version__}\n"


def test_plots_go_into_the_run_directory_by_default(deen_run, lm_run, capsys):
    assert main(["plot", "--run", str(deen_run), "Zwei Männer", "--beam", "1"]) == 0
    path = deen_run / "plots" / "alignment.png"
    assert path.read_bytes().startswith(b"\x89PNG")
    assert f"heatmap: {path}" in capsys.readouterr().out.splitlines()
    assert main(["lm", "plot", "--run", str(lm_run), "Two men play football ."]) == 0
    figure, matrix = (lm_run / "plots" / name for name in ("self-attention.png",
                                                             "self-attention-matrix.png"))
    assert figure.is_file() and matrix.is_file()
    assert capsys.readouterr().out.splitlines() == [f"reading figure: {figure}",
                                                    f"weight matrix: {matrix}"]


def test_plot_of_a_json_line_goes_beside_the_file(dates_run, tmp_path, capsys):
    (tmp_path / "in.txt").write_text("5. März 2024\n3/5/2024\n", encoding="utf-8")
    saved = tmp_path / "links.json"
    assert main(["translate", "--run", str(dates_run), "--input", str(tmp_path / "in.txt"),
                 "--alignments", str(saved), "--format", "json", "--output",
                 str(tmp_path / "out.txt")]) == 0
    assert main(["plot", "--json", str(saved), "--line", "2"]) == 0
    path = tmp_path / "plots" / "links-line2.png"
    assert path.is_file() and f"heatmap: {path}" in capsys.readouterr().out
