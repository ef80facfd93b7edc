"""Open a report.html in Debian's headless Chromium (Playwright 1.44) and say what it did.

The tests use `load`; from the command line it saves the at-a-glance screenshot of a report:

    .venv/bin/python tests/browser.py verimut-out/agentdojo-v1.2/report.html docs/report.png

or of another section, e.g. the frame coverage (docs/frame-coverage.png):

    .venv/bin/python tests/browser.py /tmp/cov/report.html docs/frame-coverage.png '#frame-coverage'
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import sync_playwright

from verimut.adapters.workarena import CHROMIUM, CHROMIUM_ARGS

# Debian's chromium (scripts/install-chromium.sh), with the flags a closed network needs: the same as WorkArena's.
FLAGS = CHROMIUM_ARGS


@dataclass
class Visit:
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # every URL the page asked for, its own included
    images: int = 0  # <img> elements that decoded to a picture
    decoded: list[str] = field(default_factory=list)  # the alt text of each of them
    broken_images: int = 0
    opened_by_link: bool | None = None  # following a finding's link opened its <details>
    title: str = ""

    @property
    def outside(self) -> list[str]:
        """Requests that leave the page: anything but the file itself and inline data."""
        return [u for u in self.requests if not u.startswith(("file://", "data:"))]


def load(report: Path, screenshot: Path | None = None, follow: str | None = None, part: str = "#at-a-glance") -> Visit:
    """Load `report`; screenshot its section `part`; optionally follow the link to cell `follow`."""
    visit = Visit()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: visit.console_errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: visit.page_errors.append(str(e)))
            page.on("request", lambda r: visit.requests.append(r.url))
            page.goto(report.resolve().as_uri(), wait_until="load")
            visit.title = page.title()
            visit.images = page.evaluate("[...document.images].filter(i => i.complete && i.naturalWidth > 0).length")
            visit.decoded = page.evaluate(
                "[...document.images].filter(i => i.complete && i.naturalWidth > 0).map(i => i.alt)"
            )
            visit.broken_images = page.evaluate("[...document.images].filter(i => i.naturalWidth === 0).length")
            if screenshot is not None:
                screenshot.parent.mkdir(parents=True, exist_ok=True)
                # The bytes, written here: Playwright's `path=` is written by its driver process,
                # which need not see the same /tmp as this one.
                screenshot.write_bytes(page.locator(part).screenshot())
            if follow is not None:
                # On this page ("#cell-ID") or on a finding page report.html links ("report/findings-0002.html#cell-ID").
                page.locator(f'a[href$="#cell-{follow}"]').first.click()
                page.wait_for_load_state("load")
                visit.opened_by_link = page.evaluate(f"document.getElementById({('cell-' + follow)!r}).open")
        finally:
            browser.close()
    return visit


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: python tests/browser.py REPORT.html SCREENSHOT.png [SECTION, default #at-a-glance]")
    v = load(Path(sys.argv[1]), Path(sys.argv[2]), part=sys.argv[3] if len(sys.argv) == 4 else "#at-a-glance")
    print(
        f"console errors: {len(v.console_errors)}, page errors: {len(v.page_errors)}, "
        f"requests leaving the page: {len(v.outside)}, images: {v.images}; screenshot: {sys.argv[2]}"
    )
    sys.exit(1 if v.console_errors or v.page_errors or v.outside else 0)
