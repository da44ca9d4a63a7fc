"""Reads the environment of process 1 (the host's init outside a PID namespace)."""
KIND = "probe"
LAYER = 'Landlock'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
open('/proc/1/environ', 'rb').read()
ESCAPED = True
"""
