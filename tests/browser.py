"""Headless Chromium for the tests that look at pages (Playwright driving Debian's chromium;
`playwright install` would download a browser, `make browser` installs Debian's)."""

import os
import shutil
from pathlib import Path

# Debian's chromium; ATTNLAB_CHROMIUM may name another Chromium-based browser's executable
CHROMIUM = os.environ.get("ATTNLAB_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# Headless, and nothing but a local server reachable: no update checks, no stray requests;
# as root in a container (CI): no sandbox, and no reliance on a small /dev/shm.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage",
                 "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"]
# Screenshots the tests write (build/ is not committed)
SHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots"


def missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed: pip install -e '.[dev]'"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no browser at {CHROMIUM}: make browser (apt-get install chromium)"
    return None
