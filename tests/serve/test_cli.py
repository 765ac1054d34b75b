"""`attnlab serve`: runs named from --run, limits from options, 127.0.0.1 by default, and a
missing or bad run directory refused in one sentence before any server starts."""

import re
from dataclasses import fields

import pytest

from attnlab.cli import build_parser, main
from attnlab.cli.serve import LIMIT_OPTIONS
from attnlab.serve import Limits, listen


@pytest.fixture
def started(monkeypatch):
    """What the server was handed: (app, (address, port) of its bound socket); not started."""
    calls = []

    def serve(app, sock):
        calls.append((app, sock.getsockname()[:2]))
        sock.close()

    monkeypatch.setattr(listen, "serve", serve)
    return calls


def test_serves_runs_named_after_their_folders_on_localhost(runs, started, capsys):
    assert build_parser().parse_args(["serve", "--run", "x"]).port == 8000
    assert main(["serve", "--run", str(runs["dates"]), "--run", f"words={runs['plain']}",
                 "--port", "0"]) == 0
    (app, (host, port)), = started
    assert list(app.state.service.runs) == ["dates", "words"]
    assert host == "127.0.0.1" and port > 0
    assert app.state.service.limits == Limits()
    out, err = capsys.readouterr()
    assert out == f"attnlab serve: serving dates, words on http://127.0.0.1:{port}/ (API docs: " \
                  f"/docs)\n"
    assert err == ""  # loopback: no warning


@pytest.mark.parametrize(("directory", "name"), [
    ("runs/demo/run", "demo"), ("runs/dates", "dates"), ("runs/dates/", "dates"),
    ("exports/bahdanau/model", "bahdanau"), ("work/demo/run/best", "demo"), ("/run", "run"),
])
def test_a_run_folder_with_a_generic_name_is_named_after_the_folder_above(directory, name):
    from attnlab.cli.serve import run_name

    assert run_name(directory) == name


def test_runs_in_folders_called_run_are_served_by_their_parents_names(runs, tmp_path, started,
                                                                      capsys):
    """The README's runs/demo/run is "demo" on the page and in requests, not "run"."""
    for name, run in (("demo", runs["dates"]), ("luong", runs["plain"])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "run").symlink_to(run, target_is_directory=True)
    assert main(["serve", "--run", str(tmp_path / "demo" / "run"), "--run",
                 str(tmp_path / "luong" / "run"), "--run", f"mine={runs['dates']}",
                 "--port", "0"]) == 0
    (app, _), = started
    assert list(app.state.service.runs) == ["demo", "luong", "mine"]
    assert "serving demo, luong, mine on" in capsys.readouterr().out


def test_limit_options_reach_the_app(runs, started):
    main(["serve", "--run", str(runs["dates"]), "--host", "0.0.0.0", "--port", "0",
          "--max-tokens", "50", "--max-upload-mb", "0.5", "--max-beam", "4",
          "--queue-size", "3", "--batch-window-ms", "2", "--max-batch", "8",
          "--max-pixels", "1000000", "--max-explain-steps", "16", "--explain-budget-s", "5"])
    (app, (host, _)), = started
    assert host == "0.0.0.0"
    assert app.state.service.limits == Limits(
        max_tokens=50, max_upload_bytes=524288, max_pixels=1_000_000, max_beam=4,
        queue_size=3, batch_window_ms=2, max_batch=8, max_explain_steps=16,
        explain_budget_s=5)


@pytest.mark.parametrize(("argv", "expected"), [
    (["--run", "/no/such/run"], "--run /no/such/run: run directory /no/such/run does not exist"),
    (["--run", "a=/no/such/run"], "run directory /no/such/run does not exist"),
    (["--run", "{dates}", "--run", "{plain_as_dates}"], "two runs are named 'dates'"),
    (["--run", "{empty}"], "has no checkpoint (best/ or last/) yet"),
    (["--run", "{dates}", "--max-beam", "0"], "limit max_beam must be positive, got 0"),
])
def test_a_bad_run_or_limit_is_one_sentence_and_no_server(runs, tmp_path, started, capsys,
                                                          argv, expected):
    (tmp_path / "empty").mkdir()
    names = {"dates": runs["dates"], "plain_as_dates": f"dates={runs['plain']}",
             "empty": tmp_path / "empty"}
    assert main(["serve", *(arg.format(**names) for arg in argv)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("attnlab: error: ") and expected in error
    assert "\n" not in error and started == []


def test_help_names_the_defaults_of_limits():
    parser = build_parser()
    serve = parser._subparsers._group_actions[0].choices["serve"]
    helps = {action.option_strings[0]: action.help for action in serve._actions
             if action.option_strings}
    defaults = {f.name: f.default for f in fields(Limits)}
    for option, (field, _, _) in LIMIT_OPTIONS.items():
        shown = re.search(r"default ([\d,.]+)", helps[option]).group(1).replace(",", "")
        default = defaults[field] / (1024 * 1024 if field == "max_upload_bytes" else 1)
        assert float(shown) == default, option
