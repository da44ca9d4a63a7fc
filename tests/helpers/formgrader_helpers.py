"""A real `jupyter server` with nbgrader's formgrader on 127.0.0.1, for tests that read what formgrader shows."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from browser_helpers import FLAGS, browser
from conftest import ROOT

TOKEN = "formgrader-test"
ONLY_FORMGRADER = ("{'nbgrader.server_extensions.formgrader': True, 'jupyterlab': False, 'notebook': False, "
                   "'jupyter_lsp': False, 'jupyter_server_terminals': False, 'notebook_shim': False, "
                   "'nbgrader.server_extensions.assignment_list': False, "
                   "'nbgrader.server_extensions.course_list': False, "
                   "'nbgrader.server_extensions.validate_assignment': False}")


class Formgrader:
    def __init__(self, port: int):
        self.base = f"http://127.0.0.1:{port}"
        self.pid = 0                  # the `jupyter server` process

    def get(self, path: str, method: str = "GET", body=None) -> tuple[int, str]:
        """``method`` on ``path`` with the token; ``body`` (JSON) for PUT, an empty body for a bare POST."""
        data = json.dumps(body).encode() if body is not None else (b"" if method in ("POST", "PUT") else None)
        request = urllib.request.Request(self.base + path, headers={"Authorization": f"token {TOKEN}"},
                                         method=method, data=data)
        try:
            with urllib.request.urlopen(request, timeout=60) as reply:
                return reply.status, reply.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace")

    def api(self, path: str, method: str = "GET", body=None):
        """formgrader's JSON API, e.g. ``api(f"grade/{id}", "PUT", {"manual_score": 2})`` as its page saves one."""
        status, text = self.get("/formgrader/api/" + path, method, body)
        assert status == 200, (path, status, text[:500])
        return json.loads(text)


def children(pid: int, named: bytes) -> list[int]:
    """The processes whose parent is ``pid`` and whose command line holds ``named``."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if parent == pid and named in f.read():
                    found.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def formgrader(course: Path, tmp: Path, wait: float = 90.0, home: Path | None = None):
    """Formgrader serving ``course`` on an ephemeral port of 127.0.0.1 (token auth); always torn down. With
    ``home``, as on the README's Hub: the server runs in the instructor's home, which names the course in
    ``~/.jupyter/nbgrader_config.py`` (``c.CourseDirectory.root``), the course lying elsewhere."""
    port = _free_port()
    config = tmp / "config"
    if home is not None:
        config = home / ".jupyter"
        config.mkdir(parents=True, exist_ok=True)
        (config / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.root = {str(course)!r}\n")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config), JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
               JUPYTER_DATA_DIR=str(tmp / "data"),
               PATH=f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ.get('PATH', '')}")
    cmd = [sys.executable, "-m", "jupyter_server", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           "--ServerApp.port_retries=0", f"--IdentityProvider.token={TOKEN}",
           f"--ServerApp.jpserver_extensions={ONLY_FORMGRADER}", f"--ServerApp.root_dir={home or course}",
           f"--Exchange.root={tmp / 'exchange'}", *(["--allow-root"] if os.geteuid() == 0 else [])]
    (tmp / "exchange").mkdir(parents=True, exist_ok=True)
    log = open(tmp / "formgrader.log", "w")
    proc = subprocess.Popen(cmd, cwd=home or course, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        server = Formgrader(port)
        server.pid = proc.pid
        deadline = time.monotonic() + wait
        while True:
            try:
                if server.get("/api/status")[0] == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"formgrader did not start: {(tmp / 'formgrader.log').read_text()[-2000:]}")
            time.sleep(0.3)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


# What an instructor sees of a flagged notebook in formgrader's page: the note at the top (its words, whether
# any of it runs past the panel's edge, as the checks' lines under each grade cell did), the cells that ask
# for a score, and the placeholder of a comment box.
SEEN = """() => {
  const note = [...document.querySelectorAll('.text_cell_render')].find(e => e.innerText.includes('for review'));
  const clipped = e => e.scrollWidth > e.clientWidth + 1;          // text that runs on past what is shown
  return {note: note.innerText, clipped: [note, ...note.querySelectorAll('*')].filter(clipped).length,
          cut: [...document.querySelectorAll('.output_stream pre')].filter(clipped).length,
          scored: [...document.querySelectorAll('input.score')].map(e => e.id),
          placeholder: (document.querySelector('textarea.comment') || {}).placeholder};
}"""


def formgrader_page(server, submission_id: str) -> dict:
    """The flagged notebook's formgrader page in headless Chromium, at a laptop's 1000 px (a screenshot in
    test-artifacts/), once its grades and comments have loaded."""
    sync_api, chromium = browser()
    with sync_api.sync_playwright() as p:
        chrome = p.chromium.launch(executable_path=chromium, args=FLAGS)
        page = chrome.new_page(viewport={"width": 1000, "height": 900},
                               extra_http_headers={"Authorization": f"token {TOKEN}"})     # (its API calls too)
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(server.base)
                   else route.abort())                  # (MathJax's CDN: the tests have no network)
        page.goto(f"{server.base}/formgrader/submissions/{submission_id}/")
        page.wait_for_function("() => [...document.querySelectorAll('textarea.comment')].some(t => t.placeholder)")
        seen = page.evaluate(SEEN)
        (ROOT / "test-artifacts").mkdir(exist_ok=True)
        page.screenshot(path=str(ROOT / "test-artifacts/formgrader-flagged-notebook.png"))   # the first screen
        chrome.close()
    return seen
