"""The course on a real JupyterHub (slow; one Hub for the module, started once).

Real Linux accounts (an instructor, four students) log in with their passwords through the Hub's login
page (PAM, the Hub's default authenticator, against passwords set by chpasswd: no test double decides
who may log in); LocalProcessSpawner starts each server as its account; nbgrader's exchange is a shared
1777 folder and every server reads a system-wide nbgrader_config.py; `watch` is a managed service of the
Hub, run as the instructor. Headless Chromium (Debian's) does what students and the instructor do.
Screenshots of the key pages go to test-artifacts/jupyterhub/.

Needs root (useradd, a Hub that starts servers as other users); skips and says so otherwise.
"""
import os
import time
from pathlib import Path

import pytest

from browser_helpers import FLAGS, browser
from hub_helpers import A, ROOT, shell_in_server
from hub_site import fill_in, hub_site, requirements

pytestmark = [pytest.mark.slow, pytest.mark.jupyterhub]
STUDENTS = ["ada", "bob", "cy", "di"]
SHOTS = ROOT / "test-artifacts" / "jupyterhub"
SETTINGS = 'c.FeedbackOnSubmit.limit = "2/day"\n'


@pytest.fixture(scope="module")
def site():
    if os.geteuid() != 0:
        pytest.skip("the JupyterHub tests need root: they create Linux accounts (useradd) and run a Hub that "
                    "starts each user's server as that user")
    missing = requirements()
    if missing:
        pytest.fail(f"the JupyterHub tests cannot run: missing {missing}")
    with hub_site(STUDENTS, SETTINGS) as (site, accounts, hub):
        yield site, accounts, hub


@pytest.fixture(scope="module")
def pages(site):
    """One logged-in browser page per account (its own cookies), kept for the module."""
    sync_api, chromium = browser()
    site_, accounts, hub = site
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        chrome = p.chromium.launch(executable_path=chromium, args=FLAGS)
        yield Pages(chrome, site_, accounts, hub)
        chrome.close()


class Pages(dict):
    def __init__(self, chrome, site, accounts, hub):
        super().__init__()
        self.chrome, self.site, self.accounts, self.hub = chrome, site, accounts, hub

    def login(self, user: str, password: str | None = None):
        context = self.chrome.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.goto(f"{self.site.url}/hub/login", timeout=60_000)
        page.fill("#username_input", user)
        page.fill("#password_input", password or self.accounts.passwords[user])
        page.click("#login_submit")
        return page

    def __missing__(self, user: str):
        page = self.login(user)
        page.wait_for_url(f"**/user/{user}/lab**", timeout=240_000)
        page.wait_for_selector("#jp-main-dock-panel", timeout=120_000)
        self[user] = page
        return page


def shot(page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def open_assignment_list(page) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click(timeout=60_000)
    page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click(timeout=30_000)


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_a_wrong_password_is_refused_at_the_hubs_login_page(site, pages):
    _, accounts, _ = site
    ada = accounts["ada"]
    page = pages.login(ada, accounts.passwords[accounts["bob"]])          # a classmate's password
    page.wait_for_selector(".login_error", timeout=60_000)
    assert "/hub/login" in page.url and "Invalid username or password" in page.content()
    shot(page, "login-refused")
    page.context.close()


def test_each_student_logs_in_and_fetches_from_the_assignment_list(site, pages):
    site_, accounts, hub = site
    names = [accounts[s] for s in STUDENTS]
    hub.start_servers(names + [site_.instructor])          # spawned at once; the logins find them ready
    for name in names:
        page = pages[name]
        open_assignment_list(page)
        page.get_by_role("button", name="Fetch", exact=True).click(timeout=90_000)
    for name in names:
        folder = site_.homes / name / A
        wait_for(lambda: len(list(folder.glob("*.ipynb"))) == 4, 90, f"{name}'s fetched notebooks")
        uid = accounts.uid(name)
        assert {p.stat().st_uid for p in folder.glob("*.ipynb")} == {uid}, "fetched as the student's account"
    shot(pages[names[0]], "assignment-list-fetched")
