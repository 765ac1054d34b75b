"""No folder of the machine that wrote them in the docs, the README or a published report: a
reader pastes every command, so each names folders relative to the checkout (made by the
`attnlab data ... --dest` commands the docs give), never /home/..., /work/... or C:\\..."""

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from publish_results import portable  # noqa: E402

# A folder under a root that holds someone's files (system folders such as /usr/bin are the same
# on every machine), or a Windows drive.
MACHINE_PATH = re.compile(r"(?<![\w.~/-])/(?:home|root|work|tmp|Users|mnt|var|opt|srv|data|"
                          r"scratch|private|media|workspace)/[\w.+-]+|\b[A-Z]:\\\w")
PAGES = sorted(page for page in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"),
                                  *(ROOT / "docs").glob("*.ipynb")]
               if "_build" not in page.parts)


def machine_paths(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if MACHINE_PATH.search(line)]


def test_the_scan_sees_a_machine_path():
    assert machine_paths("attnlab compare lstmn --data /work/shared/data/multi30k") != []
    assert machine_paths("`--rwth /home/ana/rwth`") != []
    assert machine_paths("in C:\\Users\\ana") != []
    assert machine_paths("--data data/multi30k; ms/update; https://x.org/home/a") == []


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_no_page_names_a_folder_of_this_machine(page):
    assert machine_paths(page.read_text(encoding="utf-8")) == []


def test_publishing_shows_data_folders_as_the_docs_make_them_and_refuses_any_other():
    made = ("`attnlab compare x --dir runs/x --data /work/shared/data/multi30k "
            "--rwth /a/rwth-deen-gold`")
    assert portable(made) == ("`attnlab compare x --dir runs/x --data data/multi30k "
                              "--rwth data/rwth-deen-gold`")
    with pytest.raises(ValueError, match="/home/ana/runs"):
        portable("`attnlab compare x --dir /home/ana/runs`")
