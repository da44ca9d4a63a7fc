"""What a student does, in JupyterLab's Assignment List (nbgrader's own extension, in headless Chromium):
Fetch, fill in, Submit; `watch` grades the submission; Fetch Feedback brings its pages into the
student's folder (slow: nbgrader's commands, JupyterLab and a browser)."""
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest

from autograder.samples.synthetic import fill_notebook, reference_answers
from browser_helpers import FLAGS, browser
from run_tree import TreeRun
from watch_helpers import A, exchange_course, of_kind, wait_for, watch_command


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """JupyterLab for the student ada (her own folder, config and exchange cache), on 127.0.0.1."""
    home = tmp_path / "ada"
    home.mkdir()
    (home / "nbgrader_config.py").write_text(
        f'c = get_config()\nc.Exchange.root = "{tmp_path / "exchange"}"\n'
        f'c.Exchange.cache = "{tmp_path / "cache"}"\nc.CourseDirectory.student_id = "ada"\n')
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, HOME=str(home), JUPYTER_CONFIG_DIR=str(tmp_path / "jupyter-config"),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "jupyter-runtime"),
               PATH=f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}")
    server = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
                               f"--ServerApp.token={token}", "--ServerApp.ip=127.0.0.1", "--allow-root",
                               f"--ServerApp.root_dir={home}"], cwd=home, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5)
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                pytest.fail("JupyterLab did not start")
            time.sleep(0.5)
    yield home, f"{url}/lab?token={token}"
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()


def test_the_assignment_list_fetches_the_feedback_watch_published(tmp_path, lab):
    sync_api, chromium = browser()
    home, url = lab
    course = exchange_course(tmp_path)
    run = TreeRun(watch_command(course))
    try:
        with sync_api.sync_playwright() as p:
            chrome = p.chromium.launch(executable_path=chromium, args=FLAGS)
            page = chrome.new_page()
            page.goto(url, timeout=120_000)
            page.wait_for_selector("#jp-main-dock-panel", timeout=120_000)
            page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click(timeout=60_000)
            page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click(timeout=30_000)
            page.get_by_role("button", name="Fetch", exact=True).click(timeout=60_000)
            wait_for(lambda: len(list((home / A).glob("*.ipynb"))) == 4, 60, "the fetched notebooks")
            answers = reference_answers(course / "source" / A)
            for path in sorted((home / A).glob("*.ipynb")):
                nbformat.write(fill_notebook(nbformat.read(path, as_version=4), answers[path.stem]), path)
            page.get_by_role("button", name="Submit", exact=True).click(timeout=60_000)
            wait_for(lambda: of_kind(course, "published"), 120, "watch's pages", run=run)
            page.get_by_role("button", name="Fetch Feedback", exact=True).click(timeout=60_000)
            wait_for(lambda: len(list((home / A / "feedback").glob("*/*.html"))) == 4, 60, "the fetched feedback")
            chrome.close()
    finally:
        run.signal(signal.SIGTERM)
        run.end(within=30)
    ex1 = next((home / A / "feedback").glob("*/ex1_attention.html")).read_text()
    assert "Pre-deadline feedback" in ex1 and "Score: 8 / 8" in ex1 and "Feedback for ada:" in ex1
