"""Calls os._exit(), ending its process."""
KIND = "disruption"
EXPECT = {'score': 'honest_right', 'review': True}
TARGET = "cell"
CODE = r"""
import os
os._exit(0)
"""
