"""Loops forever."""
KIND = "disruption"
EXPECT = {'score': 'honest_right', 'review': True}
TARGET = "cell"
CODE = r"""
while True:
    pass
"""
