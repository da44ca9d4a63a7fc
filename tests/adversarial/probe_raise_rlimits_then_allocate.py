"""Raises its rlimits, then allocates 4.5 GB."""
KIND = "probe"
LAYER = 'rlimits'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
import resource
for r in (resource.RLIMIT_AS, resource.RLIMIT_DATA):
    try:
        resource.setrlimit(r, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    except Exception:
        pass
big = np.ones(int(4.5e9) // 8)
ESCAPED = float(big[-1]) == 1.0
"""
