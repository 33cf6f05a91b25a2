"""Browser fixtures shared by the web tests (the replay viewer, the competition's pages): one
headless Debian Chromium per session through Playwright, and a page that records every console
error, page error and request it makes.

Chromium is /usr/bin/chromium (Debian's package), never a downloaded build: ``playwright
install`` is not used. A missing browser fails the tests, with how to get it; it never skips.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Request, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@dataclass
class WatchedPage:
    """A fresh page and what it did: ``errors`` (console errors and uncaught page errors) and
    ``requests`` (every URL it asked for, the page itself included)."""

    page: Page
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests need Debian's Chromium "
            "(apt-get install chromium, or scripts/ensure_chromium.sh)",
            pytrace=False,
        )
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def watched_page(browser: Browser) -> Iterator[WatchedPage]:
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    watched = WatchedPage(page)

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            watched.errors.append(f"console: {message.text}")

    def on_request(request: Request) -> None:
        watched.requests.append(request.url)

    page.on("console", on_console)
    page.on("pageerror", lambda err: watched.errors.append(f"page error: {err}"))
    page.on("request", on_request)
    try:
        yield watched
    finally:
        context.close()
