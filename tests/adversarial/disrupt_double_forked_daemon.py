"""Starts a double-forked daemon that outlives the cell."""
KIND = "disruption"
LAYER = 'own session and process group, PID namespace'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': False}
TARGET = "cell"
CODE = r"""
import os, time, ctypes
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(15, b'agadvdaemon', 0, 0, 0)
        while True:
            time.sleep(0.05)
    os._exit(0)
time.sleep(0.2)
"""
