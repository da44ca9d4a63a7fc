"""``doctor``: every sandbox layer, as a worker started here gets it, and what each missing one costs.

What this machine offers (``layers.detect``) is a guess made from outside; a worker started now, under the
account and on the machine ``doctor`` runs on, says what it really got (its status, as records keep it).
``report`` puts the worker's word first and says, for each layer that is missing (or kept as it was), in
one plain sentence, what a student's code can then do that it otherwise could not. Where no worker can be
started, the guess is shown and the reason said.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..inert import one_line
from .limits import Limits
from .status import SANDBOX_LAYERS, LayerStatus, State
from .forkclient import ForkServer

_L = Limits()
WITHOUT = {
    "rlimits": "a submission may use all the CPU time, memory, file size and processes the grading account may.",
    "uid": "student code runs as the grading account (its hard limits still cannot be raised), so the other "
           "layers alone keep it from what that account may read, write or signal.",
    "landlock": "student code may read every file the grading account can read (the course, the gradebook, other "
                "students' submissions) and make TCP connections where no network namespace stops them.",
    "this package hidden": "only Landlock's allowlist keeps student code from reading the reference engine, the "
                           "rubric and the hidden tests.",
    "seccomp": "student code may run programs, reach services on this machine through Unix sockets, use keyrings "
               "and System V IPC, and watch files change (inotify).",
    "user namespace": "a grader that is not root gets no network, IPC, mount or PID namespace and no root of its "
                      "own (see each).",
    "network namespace": "student code may use the network: UDP, and TCP where Landlock is missing.",
    "IPC namespace": "student code shares this machine's System V IPC and abstract Unix sockets (seccomp and "
                     "Landlock refuse most uses).",
    "mount namespace": "no private /tmp and no root of its own (see each).",
    "own root": "student code can stat, though not read, any file by name: classmates' folders, the records' "
                "names and the gradebook's size and time, as they change.",
    "PID namespace": "student code sees the grading account's processes and may signal them, and a process it "
                     "starts outside its session lives on after its worker until the fork server ends it "
                     "(within half a second: the fork server is its child subreaper).",
    "private /tmp": "what student code writes goes to the disk of the grader's temporary folder (each file up to "
                    f"{_L.file_bytes >> 20} MiB), not to a {_L.disk_bytes >> 20} MiB tmpfs of its own.",
    "python for any uid": "a root grader keeps uid 0 in the worker, with every capability dropped.",
    "cgroup": f"memory is capped per process (its address space), not for the worker as a whole: its "
              f"{_L.processes} processes together may use {_L.processes} times that.",
}


@dataclass(frozen=True)
class Line:
    layer: str                    # a key of SANDBOX_LAYERS
    status: LayerStatus
    cost: str                     # what its absence costs ("" when it is on, or costs nothing)



def render(lines: list[Line], note: str = "") -> str:
    """The table ``doctor`` prints: each layer's line and status, the cost of a missing one below it, then the
    summary (and ``note``: why no worker could be asked)."""
    width = max(len(SANDBOX_LAYERS[line.layer]) for line in lines)
    out = []
    for line in lines:
        out.append(f"{SANDBOX_LAYERS[line.layer]:<{width}}  {one_line(str(line.status))}")
        if line.cost:
            out.append(f"{'':<{width}}    without it: {line.cost}")
    return "\n".join([*out, "", *([note] if note else []), summary(lines)])


GRADER_SIDE = ("wall-clock limits", "BLAS threads", "working folder", "environment")   # not in a worker's status


def report(offered: dict[str, LayerStatus], got: dict[str, LayerStatus] | None) -> list[Line]:
    """One line per layer, in doctor's order: what the worker got where it says, else what is offered (a
    layer the worker does not report, though offered, it did not get)."""
    lines = []
    for layer in SANDBOX_LAYERS:
        status = (got or {}).get(layer) or offered.get(layer)
        if status is None:
            continue
        if got is not None and layer not in got and layer not in GRADER_SIDE and status.state is State.AVAILABLE:
            status = LayerStatus(State.MISSING, "a worker started here did not get it")
        lost = status.state is State.MISSING or status.state is State.KEPT and layer == "uid"
        lines.append(Line(layer, status, WITHOUT.get(layer, "") if lost else ""))
    return lines


def summary(lines: list[Line]) -> str:
    lacking = [SANDBOX_LAYERS[line.layer] for line in lines if line.cost]
    if not lacking:
        return "Every layer is on for a worker started by this account."
    return f"This deployment lacks {len(lacking)} layer{'s' if len(lacking) > 1 else ''}: {'; '.join(lacking)}."


def worker_layers() -> dict[str, LayerStatus]:
    """The status of a worker started now (RuntimeError, saying why, where none can be started)."""
    from .handle import WorkerDied, WorkerHandle  # (numpy: when a worker starts)
    server = ForkServer()
    try:
        handle = WorkerHandle(server, Limits())
        try:
            status = handle.status
        finally:
            handle.cleanup()
    except WorkerDied as exc:
        raise RuntimeError(f"no sandboxed worker could be started: {exc}") from None
    finally:
        server.close()
    return {name: LayerStatus.parse(text) for name, text in status.items() if name in SANDBOX_LAYERS}
