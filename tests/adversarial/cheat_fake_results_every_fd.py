"""Writes fake results and fake RPC frames to every inherited descriptor."""
KIND = "cheat"
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
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
