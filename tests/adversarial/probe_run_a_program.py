"""Runs a shell command through subprocess and IPython's !."""
KIND = "probe"
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
import subprocess
ESCAPED = subprocess.run(['/bin/sh', '-c', 'echo hi'], capture_output=True).stdout == b'hi\n'
"""
