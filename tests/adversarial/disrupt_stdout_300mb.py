"""Prints 300 MB."""
KIND = "disruption"
LAYER = 'a worker process per notebook'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': False}
TARGET = "cell"
CODE = r"""
import sys
chunk = 'x' * (1 << 20)
for _ in range(300):
    sys.stdout.write(chunk)
"""
