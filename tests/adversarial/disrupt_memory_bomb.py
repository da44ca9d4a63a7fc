"""Allocates 50 GB."""
KIND = "disruption"
EXPECT = {'score': 'honest_right', 'review': False}
TARGET = "cell"
CODE = r"""
x = bytearray(50 * 2**30)
"""
