"""Build this project's wheel and install it alone into a fresh virtual environment.

The new environment sees the development environment's third-party packages (numpy,
nbgrader, ...) through a ``.pth`` line, so nothing is downloaded, but never the
repository: its own site-packages holds the wheel's ``autograder`` and ``solutions``,
and an audit hook, loaded in every Python process of the environment, logs each file or
folder under the repository that a process opens or lists (the development
environment's folder excepted: it stands in for the dependencies from PyPI).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from conftest import ROOT

# top-level names that are not part of the project (runtime folders, build leftovers)
NOT_SHIPPED = {".git", ".venv", "build", "dist", "demo", "grading", "submitted", "autograded", "feedback",
               "gradebook.db", "test-artifacts", ".pytest_cache", ".hypothesis", ".whl", ".gl"}

AUDIT = '''\
import os, sys
_ROOT, _SKIP, _LOG = (os.environ.get(k) for k in ("REPO_AUDIT_ROOT", "REPO_AUDIT_SKIP", "REPO_AUDIT_LOG"))


def _hook(event, args):
    if event not in ("open", "os.listdir", "os.scandir") or not args or isinstance(args[0], int):
        return
    try:
        path = os.path.abspath(os.fsdecode(args[0]))
        if (path == _ROOT or path.startswith(_ROOT + os.sep)) and not path.startswith(_SKIP + os.sep):
            with open(_LOG, "a") as log:
                log.write(f"{os.getpid()} {event} {path}\\n")
    except Exception:
        pass


if _ROOT and _SKIP and _LOG:
    sys.addaudithook(_hook)
'''


@dataclass
class Installed:
    python: Path
    bin: Path
    site: Path
    wheel: Path
    audit_log: Path

    def env(self, audit_log: Path | None = None) -> dict:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
        deps_bin = Path(sys.executable).parent          # the dependencies' scripts (nbgrader runs alembic)
        env.update(PATH=os.pathsep.join([str(self.bin), str(deps_bin), env.get("PATH", "")]), REPO_AUDIT_ROOT=str(ROOT),
                   REPO_AUDIT_SKIP=str(Path(sys.prefix).resolve()), REPO_AUDIT_LOG=str(audit_log or self.audit_log),
                   PYTHONDONTWRITEBYTECODE="1")
        return env

    def run(self, *args, cwd: Path, timeout: float = 600, audit_log: Path | None = None):
        return subprocess.run(list(args), cwd=cwd, env=self.env(audit_log), capture_output=True, text=True,
                              timeout=timeout)


def _pip(*args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"pip {args[0]} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


def _ignore_top(folder, names):
    return [n for n in names if Path(folder).resolve() == ROOT and n in NOT_SHIPPED or n == "__pycache__"
            or n.endswith(".egg-info")]


def _source_copy(tmp: Path) -> Path:
    """A copy of the working tree (links kept as links), so no stale build/ folder can leak in."""
    src = tmp / "src"
    shutil.copytree(ROOT, src, symlinks=True, ignore=_ignore_top)
    return src


def build_wheel(tmp: Path) -> Path:
    src = _source_copy(tmp)
    _pip("wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp / "dist"), str(src))
    shutil.rmtree(src)
    return next((tmp / "dist").glob("attention_course-*.whl"))


def build_sdist(tmp: Path) -> Path:
    """The sdist, through setuptools' PEP 517 hook (what `python -m build --sdist` calls)."""
    src = _source_copy(tmp)
    hook = "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))"
    proc = subprocess.run([sys.executable, "-c", hook, str(tmp / "sdist")], cwd=src, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    shutil.rmtree(src)
    return tmp / "sdist" / proc.stdout.split()[-1]


def install_wheel(tmp: Path, wheel: Path) -> Installed:
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    _pip("--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel))
    site = Path(subprocess.check_output([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                                         "['purelib'])"], text=True).strip())
    (site / "_dev_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (site / "_repo_audit.py").write_text(AUDIT)
    (site / "_repo_audit.pth").write_text("import _repo_audit\n")
    return Installed(python, venv / "bin", site, wheel, tmp / "repo-reads.log")
