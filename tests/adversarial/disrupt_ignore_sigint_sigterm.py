"""Ignores SIGINT and SIGTERM, then loops."""
KIND = "disruption"
LAYER = 'wall-clock limits'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': True}
TARGET = "cell"
CODE = r"""
import signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    pass
"""
