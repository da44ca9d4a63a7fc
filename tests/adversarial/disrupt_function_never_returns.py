"""A function that never returns."""
KIND = "disruption"
LAYER = 'wall-clock limits'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'below_honest_right', 'review': True}
TARGET = "crossover_length"
CODE = r"""
def crossover_length(d_model, dtype_bytes=2, expansion=4):
    while True:
        pass
"""
