"""Starts a process in a process group of its own whose parent stays alive: killing the worker's process group
does not reach it, and no double fork is needed.

Stopped by the worker's PID namespace (the worker is its init: when it ends, the kernel ends every process in
it); where a grader has none, by the fork server, which adopts the orphan as child subreaper and ends it.
"""
KIND = "disruption"
LAYER = 'own session and process group, PID namespace'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': False}
TARGET = "cell"
CODE = r"""
import os, time, ctypes
if os.fork() == 0:
    os.setpgid(0, 0)
    ctypes.CDLL(None).prctl(15, b'agadvgroup', 0, 0, 0)
    while True:
        time.sleep(0.05)
time.sleep(0.2)
"""


def inspect(record, out):
    from sandbox_helpers import lasting_processes
    assert lasting_processes("agadvgroup", seconds=30) == [], "a process that left the worker's group outlived it"
