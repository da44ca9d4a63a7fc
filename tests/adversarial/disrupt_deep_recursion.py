"""Recurses without end after raising the recursion limit."""
KIND = "disruption"
LAYER = 'a worker process per notebook'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': True}
TARGET = "cell"
CODE = r"""
import sys
sys.setrecursionlimit(10**7)
def f(n):
    return f(n + 1)
f(0)
"""
