"""Spawns 200 processes."""
KIND = "probe"
LAYER = 'rlimits'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
import os
pids = []
for _ in range(200):
    pid = os.fork()
    if pid == 0:
        import time; time.sleep(2); os._exit(0)
    pids.append(pid)
ESCAPED = len(pids) == 200
"""
