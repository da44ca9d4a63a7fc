"""Installs a custom exception handler that hides failures."""
KIND = "cheat"
LAYER = 'grader-side scoring'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
get_ipython().set_custom_exc((Exception,), lambda *a, **k: None)
"""
