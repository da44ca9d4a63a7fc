"""Calls sys.exit()."""
KIND = "disruption"
EXPECT = {'score': 'honest_right', 'review': False}
TARGET = "cell"
CODE = r"""
import sys
sys.exit(3)
"""
