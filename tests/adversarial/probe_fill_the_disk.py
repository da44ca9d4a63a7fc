"""Reserves about 1 GB in files in its working folder (far more than a submission may keep)."""
KIND = "probe"
LAYER = 'mount namespace with one tmpfs'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
import os
reserved = 0
for i in range(16):
    try:
        with open(f'fill{i}', 'wb') as f:
            os.posix_fallocate(f.fileno(), 0, 60 << 20)     # under the 64 MB file-size limit
        reserved += 60 << 20
    except OSError:
        break
ESCAPED = reserved > 900 << 20
for i in range(16):
    try:
        os.remove(f'fill{i}')
    except OSError:
        pass
"""
