"""Sleeps forever."""
KIND = "disruption"
EXPECT = {'score': 'honest_right', 'review': True}
TARGET = "cell"
CODE = r"""
import time
time.sleep(10**6)
"""
