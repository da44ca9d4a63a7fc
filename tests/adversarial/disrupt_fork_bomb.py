"""A bounded fork bomb (2^8 processes if unchecked)."""
KIND = "disruption"
LAYER = 'own session and process group, PID namespace'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': 'any'}
TARGET = "cell"
CODE = r"""
import os
for _ in range(8):
    try:
        os.fork()
    except OSError:
        pass
import time
time.sleep(0.2)
"""
