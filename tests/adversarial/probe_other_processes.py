"""Looks for processes other than its own in /proc (the grader's, classmates' workers), by stat, which
Landlock does not check.

Stopped by the worker's PID namespace and the /proc of its own that its root mounts (issue 35, item 9): it
sees its own processes only.
"""
KIND = "probe"
LAYER = 'a root of its own'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
import os
others = []
for pid in range(1, 4096):
    if pid != os.getpid():
        try:
            os.stat('/proc/%d' % pid)
            others.append(pid)
        except OSError:
            pass
ESCAPED = bool(others)
"""
