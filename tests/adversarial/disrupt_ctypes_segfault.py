"""Dereferences a null pointer with ctypes."""
KIND = "disruption"
EXPECT = {'score': 'honest_right', 'review': True}
TARGET = "cell"
CODE = r"""
import ctypes
ctypes.string_at(0)
"""
