"""The course on a real JupyterHub, set up as docs/how-to/jupyterhub.md sets it up, for tests/env/hub/test_jupyterhub.py
and benchmarks/hub_rush.py: accounts with passwords, homes that classmates cannot read, the students' environment
(without this package) and the grader's (this package's wheel, readable by the instructor's group only), nbgrader's
exchange in a shared folder (1777, as /tmp), a system-wide nbgrader_config.py under a temporary prefix that every
server reads through JUPYTER_CONFIG_PATH (nothing is written to /etc), the instructor's course released as the
instructor, and the Hub with `watch` as its service. This checkout is closed to every other account meanwhile
(it holds the solutions; the deployment's machine holds no copy others can read). ``hub_site`` undoes all of it,
however the test ends: the Hub and every process of the accounts ended, the accounts deleted, modes restored.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import ExitStack, contextmanager
from pathlib import Path

import nbformat

from autograder.samples.synthetic import fill_notebook, reference_answers
from hub_accounts import Accounts, closed_to_others, python_paths, traversable
from hub_envs import grader_env, student_env
from hub_helpers import A, COURSE_ID, PROXY, ROOT, Hub, Site, watch_service


def requirements() -> str | None:
    """Why a Hub cannot run here (None when it can). Only the missing root is a reason to skip."""
    if os.geteuid() != 0:
        return None
    missing = [what for what, ok in (("configurable-http-proxy (`make hub-proxy`: npm install into "
                                      ".hub-proxy/)", PROXY.exists()),
                                     ("jupyterhub (pip install -e '.[dev]')", shutil.which(
                                         "jupyterhub", path=str(Path(sys.executable).parent)) is not None),
                                     ("useradd/userdel/chpasswd", all(map(shutil.which, (
                                         "useradd", "userdel", "chpasswd")))))
               if not ok]
    return "; ".join(missing) or None


def as_user(user: str, site: Site, args: list[str], cwd: Path) -> str:
    """``args`` run as ``user`` with a server's environment (what that user types in a terminal)."""
    home = site.homes / user
    env = [f"{k}={v}" for k, v in {**site.user_env(user), "HOME": str(home), "USER": user}.items()]
    done = subprocess.run(["runuser", "-u", user, "--", "env", "-i", *env, *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise RuntimeError(f"{args} as {user} ended {done.returncode}: {done.stdout}{done.stderr}")
    return done.stdout + done.stderr


def lay_out(site: Site, course_settings: str) -> None:
    """Exchange, configs and the instructor's course, released by the instructor."""
    site.exchange.mkdir(parents=True)
    site.exchange.chmod(0o1777)                    # nbgrader's docs: writable by all; sticky, as /tmp
    site.config_path.mkdir(parents=True)
    (site.config_path / "nbgrader_config.py").write_text(
        f'c = get_config()\nc.CourseDirectory.course_id = "{COURSE_ID}"\nc.Exchange.root = "{site.exchange}"\n')
    site.config_path.parent.parent.chmod(0o755)
    course = site.course
    course.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "source", course / "source")
    with open(course / "nbgrader_config.py", "a") as f:
        # absolute: the instructor's server (formgrader) runs in their home, where the course's relative
        # "sqlite:///gradebook.db" would open (and create) an empty gradebook
        f.write(f'\nc.Exchange.root = "{site.exchange}"\n'
                f'c.CourseDirectory.db_url = "sqlite:///{course / "gradebook.db"}"\n{course_settings}')
    jupyter = site.homes / site.instructor / ".jupyter"
    jupyter.mkdir()
    (jupyter / "nbgrader_config.py").write_text(f'c = get_config()\nc.CourseDirectory.root = "{course}"\n')
    subprocess.run(["chown", "-R", f"{site.instructor}:{site.instructor}", str(course), str(jupyter)], check=True)
    nbgrader = [str(site.grader_env / "bin" / "python"), "-m", "nbgrader"]
    as_user(site.instructor, site, [*nbgrader, "generate_assignment", A, "--log-level=WARN"], course)
    as_user(site.instructor, site, [*nbgrader, "release_assignment", A, "--log-level=WARN"], course)


@contextmanager
def hub_site(students: list[str], course_settings: str = "", watch_args: list[str] = ()):
    """(Site, Accounts, Hub), all undone on leaving. ``students``: role names (each account gets a tag)."""
    base = Path(tempfile.mkdtemp(prefix="attention-hub-"))
    base.chmod(0o755)
    accounts = Accounts(["teach", *students], base / "home")
    with ExitStack() as undo:
        undo.callback(shutil.rmtree, base, ignore_errors=True)
        undo.callback(_remove_accounts, accounts)
        accounts.create()
        site = Site(base, accounts["teach"], [accounts[s] for s in students])
        undo.enter_context(traversable(python_paths(checkout=False)))
        environments(site)
        undo.enter_context(closed_to_others(ROOT))
        lay_out(site, course_settings)
        hub = Hub(site, [watch_service(site, list(watch_args))])
        undo.callback(hub.stop)
        yield site, accounts, hub


def environments(site: Site) -> None:
    """The students' environment and the grader's (this package's wheel, 0750 to the instructor's group)."""
    from wheel_helpers import build_wheel
    build = site.base / "build"
    build.mkdir(mode=0o700)
    student_env(site.student_env)
    grader_env(site.grader_env, build_wheel(build), group=site.instructor)     # useradd --user-group: its own
    shutil.rmtree(build)


def _remove_accounts(accounts: Accounts) -> None:
    left = accounts.remove()
    if left:
        print(f"processes of the test accounts were still running and were killed: {left}", file=sys.stderr)


def fill_in(hub: Hub, user: str, overrides: dict | None = None) -> None:
    """Fill each fetched notebook in ``user``'s server through its contents API (as a student saves)."""
    answers = reference_answers(hub.site.course / "source" / A)
    status, listing = hub.server_api(user, "GET", f"contents/{A}")
    assert status == 200, (user, status, listing)
    for item in listing["content"]:
        if not item["name"].endswith(".ipynb"):
            continue
        status, model = hub.server_api(user, "GET", f"contents/{A}/{item['name']}?content=1")
        nb = fill_notebook(model["content"], answers[item["name"][:-6]], overrides)
        nb.metadata["sample_submission"] = {"student": user}         # bytes differ between classmates
        status, saved = hub.server_api(user, "PUT", f"contents/{A}/{item['name']}",
                                       {"type": "notebook", "format": "json", "content": nbformat.from_dict(nb)})
        assert status == 200, (user, item["name"], status, saved)
