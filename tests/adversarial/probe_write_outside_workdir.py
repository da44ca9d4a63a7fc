"""Writes a file in /tmp, outside its working directory."""
KIND = "probe"
LAYER = 'mount namespace with one tmpfs'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
open('/tmp/adversarial-escape-write', 'w').write('x')
ESCAPED = True
"""
