"""Calls sys.exit()."""
KIND = "disruption"
LAYER = 'a worker process per notebook'   # what must stop it: a row of the README's layer tables
EXPECT = {'score': 'honest_right', 'review': False}
TARGET = "cell"
CODE = r"""
import sys
sys.exit(3)
"""
