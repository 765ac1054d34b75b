"""The README's library example runs as written and gives what its comments say, and the demo
command works."""

import re
from pathlib import Path

import torch

from attnlab.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


def run_library_example() -> dict:
    """The README's library example, run as written; its variables by name."""
    text = README.read_text(encoding="utf-8")
    code = re.search(r"## Library example\n\n```python\n(.*?)```", text, re.S)
    assert code, "README has no library example"
    names: dict = {}
    torch.manual_seed(0)  # the example draws its inputs; what it states holds for any draw
    exec(compile(code.group(1), str(README), "exec"), names)
    return names


def test_readme_library_example_gives_what_it_says(capsys):
    example = run_library_example()
    context, weights, mask = example["context"], example["weights"], example["mask"]
    # "(2, 5, 128) (2, 5, 9)", printed as torch.Size lines
    assert context.shape == (2, 5, 128) and weights.shape == (2, 5, 9)
    assert capsys.readouterr().out.startswith("torch.Size([2, 5, 128]) torch.Size([2, 5, 9])\n")
    # "ones: a distribution over the real words" (the second sentence has 6)
    torch.testing.assert_close(weights[1].sum(-1), torch.ones(5))
    assert (weights[1, :, 6:] == 0).all() and (weights >= 0).all()
    # One decoder step with the projected keys: (2, 128), (2, 9), the first query's answer
    step_context, step_weights = example["step_context"], example["step_weights"]
    assert step_context.shape == (2, 128) and step_weights.shape == (2, 9)
    torch.testing.assert_close(step_context, context[:, 0])
    torch.testing.assert_close(step_weights, weights[:, 0])
    # local-p with window 2: "at most 5 non-zero weights per query", none on padding
    local_weights = example["local_weights"]
    assert local_weights.shape == (2, 5, 9)
    assert ((local_weights > 0).sum(-1) <= 5).all() and (local_weights[1, :, 6:] == 0).all()
    # Hard attention: one real position per query and log p(s~ | a) of it (0 where the
    # expectation was taken instead of a sample)
    sample, hard_weights = example["out"].sample, example["out"].weights
    assert sample.index.shape == (2,) and (sample.index >= 0).all() and sample.index[1] < 6
    chosen = hard_weights.gather(-1, sample.index.unsqueeze(-1)).squeeze(-1)
    torch.testing.assert_close(sample.log_prob,
                               torch.where(sample.expectation, 0.0, chosen.log()))
    # "ask a score what it needs: True"; the name form used above is one of SCORES
    assert example["SCORES"]["dot"].needs_equal_dims is True
    assert "additive" in example["SCORES"]
    assert mask.sum(-1).tolist() == [9, 6]


def test_attention_tour_demo(capsys):
    assert main(["demo", "--tour"]) == 0
    out = capsys.readouterr().out
    assert "global dot" in out and "local-p" in out and "Katze" in out


def test_readme_is_a_front_door_with_its_picture_and_working_links():
    """Two screens: the heatmap (a small file under docs/) and links into the site that exist."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    images = re.findall(r'<img src="([^"]+)"', text) + re.findall(r"!\[[^]]*\]\(([^)]+)\)", text)
    assert images, "README shows no picture"
    for image in images:
        path = README.parent / image
        assert image.startswith("docs/") and path.is_file(), image
        assert path.stat().st_size < 200_000, f"{image}: {path.stat().st_size} bytes"
    links = [link.split("#")[0] for link in re.findall(r"\]\(([^)]+)\)", text)
             if not re.match(r"[a-z]+:", link)]
    assert any(link.startswith("docs/") for link in links)
    missing = [link for link in links if link and not (README.parent / link).exists()]
    assert not missing, f"README links to missing files: {missing}"
