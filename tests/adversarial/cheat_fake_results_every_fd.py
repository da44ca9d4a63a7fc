"""Writes fake results and fake RPC frames to every inherited descriptor.

Bytes that are not a valid reply end the worker (the cell is skipped), so the cheat can only lose."""
KIND = "cheat"
LAYER = 'RPC replies and the value codec'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'at_most_honest_wrong', 'review': True}
TARGET = "causal_mask"
CODE = r"""
import os
fake = b'\x93AGRPC1\x00' + bytes(12) + b'{"ok": true, "total": 28}' * 4
for fd in range(3, 1024):
    try:
        os.write(fd, fake)
    except OSError:
        pass
"""
