"""Headless Chromium for the page tests: Debian's chromium driven by playwright (never a download).

`make test` installs chromium when it runs as root (as in CI). Without root it cannot, and the
browser tests skip and say so; as root a missing chromium is a failure, so CI never skips them.
"""
from __future__ import annotations

import os
import shutil

import pytest

FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
         "--disable-background-networking", "--disable-component-update"]


def find_chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def browser():
    """(playwright's sync_api, the chromium executable), or a skip that says why."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed "
                                   "(pip install -e '.[dev]'); the pages were not checked in a browser")
    chromium = find_chromium()
    if chromium:
        return sync_api, chromium
    if os.geteuid() == 0:
        pytest.fail("chromium is missing: `make browser` installs Debian's chromium (this user is root)")
    pytest.skip("chromium is missing and cannot be installed without root (`make browser` as root "
                "installs Debian's chromium); the pages were not checked in a browser")
