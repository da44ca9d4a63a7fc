"""A real JupyterHub on 127.0.0.1 for the tests: PAM logins for real accounts, a local process spawner (each
user's server runs as that account), nbgrader's exchange as its JupyterHub documentation sets it up, and
`watch` as a managed service of the Hub, run as the instructor. The layout of docs/how-to/jupyterhub.md: students'
servers run from the students' environment (no grader package in it), the instructor's server and `watch`
from the grader's, which only the instructor's group can read (hub_envs.py builds both).

The Hub runs as root (LocalProcessSpawner needs it to start a server as each user) under tests/helpers/run_tree.py,
so every process it starts (the proxy, each server, their kernels, the service and its workers) is found
by the Hub's own process tree and nothing can outlive the test unseen.
"""
from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from run_tree import TreeRun

ROOT = Path(__file__).resolve().parents[2]
PROXY = ROOT / ".hub-proxy" / "node_modules" / ".bin" / "configurable-http-proxy"
A = "ch04_attention"
COURSE_ID = "attention-course"
WATCH_SERVICE = "attention-watch"
DRIVER = "test-driver"
DRIVER_SCOPES = ["admin:users", "admin:servers", "access:servers", "tokens", "list:users", "read:users",
                 "list:services", "read:services"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def venv_bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


@dataclass
class Site:
    """The folders of one Hub: ``base`` (0755) holds homes, the exchange and the system-wide config prefix;
    ``hub`` (0700, root's) the Hub's database, cookie secret, config and log."""
    base: Path
    instructor: str
    students: list[str]
    port: int = field(default_factory=free_port)
    token: str = field(default_factory=lambda: secrets.token_hex(24))

    @property
    def hub(self) -> Path:
        return self.base / "hub"

    @property
    def homes(self) -> Path:
        return self.base / "home"

    @property
    def exchange(self) -> Path:
        return self.base / "srv" / "nbgrader" / "exchange"

    @property
    def config_path(self) -> Path:
        """Stands for /etc/jupyter: every server is pointed at it with JUPYTER_CONFIG_PATH."""
        return self.base / "etc" / "jupyter"

    @property
    def course(self) -> Path:
        return self.homes / self.instructor / "course"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def student_env(self) -> Path:
        """Stands for /opt/student: the students' environment (jupyterhub, jupyterlab, nbgrader, numpy, ...)."""
        return self.base / "opt" / "student"

    @property
    def grader_env(self) -> Path:
        """Stands for /opt/grader: this package and its dependencies, 0750 to the instructor's group."""
        return self.base / "opt" / "grader"

    def env_of(self, user: str) -> Path:
        return self.grader_env if user == self.instructor else self.student_env

    def user_env(self, user: str | None = None) -> dict[str, str]:
        """What a server (``user``'s; a student's by default) and the service get: its environment first on PATH,
        the system-wide config."""
        return {"PATH": f"{self.env_of(user) / 'bin'}:/usr/bin:/bin", "JUPYTER_CONFIG_PATH": str(self.config_path),
                "PYTHONDONTWRITEBYTECODE": "1"}


def watch_service(site: Site, extra: list[str] = ()) -> dict:
    """The c.JupyterHub.services entry docs/how-to/jupyterhub.md shows: `watch` as the instructor, in the course, from the grader's
    environment."""
    return {"name": WATCH_SERVICE, "user": site.instructor, "cwd": str(site.course),
            "command": [str(site.grader_env / "bin" / "python"), "-m", "autograder", "watch", "--course",
                        str(site.course), *extra],
            "environment": site.user_env(site.instructor)}


GRADER_SERVER = '''

def grader_environment_for_the_instructor(spawner):
    """The instructor's server runs from the grader's environment; every other from the students'."""
    if spawner.user.name == {instructor!r}:
        spawner.cmd = [{cmd!r}]
        spawner.environment = {{**spawner.environment, "PATH": {path!r}}}


c.Spawner.pre_spawn_hook = grader_environment_for_the_instructor  # noqa: F821
'''


def hub_config(site: Site, services: list[dict]) -> str:
    """jupyterhub_config.py for ``site``: only literals, so the file reads as what a course would write."""
    settings = {
        "JupyterHub.bind_url": site.url,
        "JupyterHub.hub_bind_url": f"http://127.0.0.1:{free_port()}",
        "ConfigurableHTTPProxy.api_url": f"http://127.0.0.1:{free_port()}",
        "ConfigurableHTTPProxy.command": [str(PROXY)],
        "JupyterHub.db_url": f"sqlite:///{site.hub / 'jupyterhub.sqlite'}",
        "JupyterHub.cookie_secret_file": str(site.hub / "jupyterhub_cookie_secret"),
        "JupyterHub.authenticator_class": "pam",            # the accounts' own passwords (set by chpasswd)
        "PAMAuthenticator.open_sessions": False,
        "Authenticator.allowed_users": sorted([site.instructor, *site.students]),
        "Authenticator.admin_users": [site.instructor],
        "JupyterHub.spawner_class": "localprocess",         # each server runs as its user (setuid by the Hub)
        "Spawner.cmd": [str(site.student_env / "bin" / "jupyterhub-singleuser")],
        "Spawner.default_url": "/lab",
        "Spawner.environment": site.user_env(),
        "Spawner.start_timeout": 240,
        "Spawner.http_timeout": 240,
        "JupyterHub.services": [*services, {"name": DRIVER, "api_token": site.token}],
        "JupyterHub.load_roles": [{"name": DRIVER, "scopes": DRIVER_SCOPES, "services": [DRIVER]}],
        "JupyterHub.cleanup_servers": True,
    }
    lines = ["c = get_config()  # noqa: F821"]
    for name, value in settings.items():
        value = set(value) if name.startswith("Authenticator.") else value
        lines.append(f"c.{name} = {value!r}")
    return "\n".join(lines) + GRADER_SERVER.format(instructor=site.instructor, path=site.user_env(site.instructor)["PATH"],
                                                   cmd=str(site.grader_env / "bin" / "jupyterhub-singleuser"))


class Hub:
    """The running Hub, with its admin API (as the test-driver service) and its users' servers."""

    def __init__(self, site: Site, services: list[dict]):
        self.site = site
        site.hub.mkdir(mode=0o700, parents=True, exist_ok=True)
        (site.hub / "jupyterhub_config.py").write_text(hub_config(site, services))
        self.log = site.hub / "jupyterhub.log"
        env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{PROXY.parent}:/usr/bin:/bin")
        command = ["/bin/sh", "-c", 'cd "$1" && shift && exec "$@" >>jupyterhub.log 2>&1', "sh", str(site.hub),
                   venv_bin("jupyterhub"), "-f", str(site.hub / "jupyterhub_config.py")]
        self.run = _tree_run(command, env)
        deadline = time.monotonic() + 120
        while not self._up():
            if self.run.launcher.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Hub did not start:\n{self.log_tail()}")
            time.sleep(0.3)

    def _up(self) -> bool:
        try:
            return self.api("GET", "/hub/api/")[0] == 200
        except OSError:
            return False

    def log_tail(self, chars: int = 6000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else "(no log)"

    def api(self, method: str, path: str, body=None, token: str | None = None, timeout: float = 60):
        """(status, parsed JSON or text) of ``method path`` through the proxy, as the driver service."""
        data = json.dumps(body).encode() if body is not None else (b"" if method in ("POST", "PUT") else None)
        request = urllib.request.Request(self.site.url + path, data=data, method=method,
                                         headers={"Authorization": f"token {token or self.site.token}",
                                                  "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as reply:
                text = reply.read().decode()
                status = reply.status
        except urllib.error.HTTPError as exc:
            text, status = exc.read().decode(errors="replace"), exc.code
        try:
            return status, json.loads(text) if text else None
        except ValueError:
            return status, text

    def headers(self, path: str) -> dict[str, str]:
        """The response headers of GET ``path`` (as the driver service)."""
        request = urllib.request.Request(self.site.url + path, headers={"Authorization": f"token {self.site.token}"})
        with urllib.request.urlopen(request, timeout=60) as reply:
            return {k.lower(): v for k, v in reply.headers.items()}

    def user(self, name: str) -> dict:
        status, body = self.api("GET", f"/hub/api/users/{name}")
        assert status == 200, (name, status, body)
        return body

    def start_servers(self, names: list[str], within: float = 300) -> None:
        """Ask the Hub to spawn each user's server (all at once), then wait until every one is ready."""
        for name in names:
            status, body = self.api("POST", f"/hub/api/users/{name}/server")
            assert status in (201, 202, 400), (name, status, body)       # 400: already running
        deadline = time.monotonic() + within
        for name in names:
            while not (self.user(name).get("servers", {}).get("", {}).get("ready")):
                if time.monotonic() > deadline or self.run.launcher.poll() is not None:
                    raise AssertionError(f"{name}'s server did not start:\n{self.log_tail()}")
                time.sleep(0.5)

    def server_api(self, user: str, method: str, path: str, body=None):
        return self.api(method, f"/user/{user}/api/{path}", body)

    def stop(self, within: float = 90) -> tuple[int | None, list[str]]:
        """SIGTERM to the Hub, as systemd stops it; (its status, what outlived it by ``within`` s)."""
        if self.run.launcher.poll() is None:
            try:
                self.run.signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            status, _ = self.run.end(within=within)
            return status, []
        except AssertionError as exc:
            return None, str(exc).splitlines()[1:]


def _tree_run(command: list[str], env: dict) -> TreeRun:
    """TreeRun with an environment of its own (the Hub's PATH holds the proxy)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        return TreeRun(command)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_in_server(hub: Hub, user: str, code: str, timeout: float = 300) -> str:
    """Run ``code`` in a kernel of ``user``'s own server (as that account, with the server's environment,
    as an instructor types it in a notebook); returns what it printed. A failing cell raises, with its
    traceback."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(1) as pool:      # a thread of its own: playwright's sync API holds this one's loop
        return pool.submit(asyncio.run, asyncio.wait_for(_execute(hub, user, code), timeout)).result()


async def _execute(hub: Hub, user: str, code: str) -> str:
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect
    status, kernel = hub.server_api(user, "POST", "kernels", {"name": "python3"})
    assert status == 201, (user, status, kernel)
    url = f"ws://127.0.0.1:{hub.site.port}/user/{user}/api/kernels/{kernel['id']}/channels"
    socket_ = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {hub.site.token}"}))
    msg_id, printed, error = uuid.uuid4().hex, [], None
    await socket_.write_message(json.dumps({
        "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": user, "session": uuid.uuid4().hex,
                   "version": "5.3", "date": ""},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": code, "silent": False, "store_history": False, "user_expressions": {},
                    "allow_stdin": False, "stop_on_error": True}}))
    try:
        while True:
            raw = await socket_.read_message()
            if raw is None:
                raise AssertionError(f"the kernel of {user} closed its channel: {''.join(printed)}")
            message = json.loads(raw)
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "stream":
                printed.append(content["text"])
            elif kind == "error":
                error = "\n".join(content["traceback"])
            elif kind == "execute_reply":
                break
    finally:
        socket_.close()
        hub.server_api(user, "DELETE", f"kernels/{kernel['id']}")
    if error:
        raise AssertionError(f"in {user}'s server:\n{''.join(printed)}\n{error}")
    return "".join(printed)


def shell_in_server(hub: Hub, user: str, args: list[str], check: bool = True, timeout: float = 240,
                    cwd: Path | None = None) -> str:
    """A command run from a kernel of ``user``'s server (as a terminal there would), in ``cwd`` (the server's
    folder by default); its output."""
    where = str(cwd) if cwd else None
    code = ("import subprocess, json\n"
            f"done = subprocess.run({args!r}, capture_output=True, text=True, timeout={timeout}, cwd={where!r})\n"
            "print(json.dumps([done.returncode, done.stdout, done.stderr]))\n")
    status, out, err = json.loads(run_in_server(hub, user, code, timeout + 30).strip().splitlines()[-1])
    if check and status:
        raise AssertionError(f"{args} as {user} ended {status}:\n{out}\n{err}")
    return out + err
