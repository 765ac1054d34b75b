"""Fuzzing the inputs users type and feed: random bytes, random UTF-8 and random lengths go to
translate (library and CLI), the corpus reader and the config loader. Each must give a result
or one attnlab error sentence: never a traceback, a crash or a hang (hypothesis, bounded and
derandomized in CI)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnlab.cli import main
from attnlab.config import load_config
from attnlab.configs import config_path
from attnlab.data import read_lines, read_parallel
from attnlab.errors import UserError
from attnlab.translation import RunConfig, TranslationRun

FUZZ = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
# Text as people paste it: any Unicode (no surrogates), control characters, long runs of one
# character, and lines of many words.
texts = st.one_of(st.text(max_size=60),
                  st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=300),
                  st.builds(lambda c, n: c * n, st.characters(codec="utf-8"), st.integers(1, 400)),
                  st.lists(st.sampled_from(["Zwei", "Männer", "ß", "2024年", "\t", " ", "."]),
                           max_size=200).map(" ".join))
raw_bytes = st.binary(max_size=400)


def one_sentence_error(err: str) -> None:
    assert err.startswith("attnlab: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and "unexpected" not in err, err


@pytest.fixture(scope="module")
def loaded(dates_run):
    return TranslationRun.load(dates_run)


@FUZZ
@given(lines=st.lists(texts, min_size=1, max_size=4))
def test_translate_library_answers_every_line(loaded, lines):
    results = list(loaded.translate(lines, beam=2))
    assert len(results) == len(lines)
    for line, result in zip(lines, results, strict=True):
        assert isinstance(result.text, str)
        if not line.strip():
            assert result.text == ""


@FUZZ
@given(data=raw_bytes)
def test_translate_cli_on_random_bytes(dates_run, tmp_path, capsys, data):
    source, output = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_bytes(data)
    code = main(["translate", "--run", str(dates_run), "--input", str(source),
                 "--output", str(output), "--beam", "1"])
    out, err = capsys.readouterr()
    if code == 0:  # one output line per input line ("\n"-separated, as the CLI reads them)
        expected = data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
        assert output.read_bytes().count(b"\n") == expected
    else:
        assert code == 2
        one_sentence_error(err)
        assert "invalid UTF-8" in err or "line" in err


@FUZZ
@given(first=raw_bytes, second=raw_bytes)
def test_corpus_reader_on_random_bytes(tmp_path, first, second):
    src, tgt = tmp_path / "a.de", tmp_path / "a.en"
    src.write_bytes(first)
    tgt.write_bytes(second)
    try:
        pairs = read_parallel(src, tgt)
    except UserError as error:
        assert "\n" not in str(error) and (str(src) in str(error) or str(tgt) in str(error))
    else:
        assert len(pairs) == len(read_lines(src)) == len(read_lines(tgt))


@FUZZ
@given(text=st.one_of(raw_bytes, st.text(max_size=300).map(str.encode)))
def test_config_loader_on_random_files(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_bytes(text)
    try:
        load_config(path, RunConfig)
    except UserError as error:
        assert str(path) in str(error) and "\n" not in str(error).strip(), str(error)


yaml_values = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                        st.floats(allow_nan=True), st.text(max_size=20))
keys = st.sampled_from(["data.max_len", "model.decoder.hidden_dim", "model.decoder.kind",
                        "model.decoder.attention.score", "model.decoder.attention.window",
                        "train.lr", "decode.beam", "model.encoder.dropout", "nope.key", "train"])


@FUZZ
@given(overrides=st.lists(st.tuples(keys, yaml_values), max_size=3))
def test_config_overrides_with_random_values(overrides):
    config = config_path("multi30k-bahdanau")
    try:
        load_config(config, RunConfig, [f"{key}={value}" for key, value in overrides])
    except UserError as error:
        assert str(error).strip() and "\n" not in str(error).strip()
