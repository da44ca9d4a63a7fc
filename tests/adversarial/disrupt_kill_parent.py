"""Sends SIGKILL to its parent and its process group's leader."""
KIND = "disruption"
LAYER = 'own session and process group, PID namespace'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': False}
TARGET = "cell"
CODE = r"""
import os, signal
for pid in (os.getppid(), 1):
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
"""
