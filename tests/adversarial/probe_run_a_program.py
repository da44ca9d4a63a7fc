"""Runs a shell command through subprocess and IPython's !."""
KIND = "probe"
LAYER = 'seccomp filter'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
import subprocess
ESCAPED = subprocess.run(['/bin/sh', '-c', 'echo hi'], capture_output=True).stdout == b'hi\n'
"""
