"""Dereferences a null pointer with ctypes."""
KIND = "disruption"
LAYER = 'a worker process per notebook'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': True}
TARGET = "cell"
CODE = r"""
import ctypes
ctypes.string_at(0)
"""
