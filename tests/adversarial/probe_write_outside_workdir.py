"""Writes a file in /tmp, outside its working directory."""
KIND = "probe"
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
open('/tmp/adversarial-escape-write', 'w').write('x')
ESCAPED = True
"""
