"""Finds where this package is installed (the grader's own modules are loaded in the worker) and reads
the rubric, the packaged source notebooks (hidden tests) or the reference engine from there."""
KIND = "probe"
LAYER = "empty read-only tmpfs over this package's folders"   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
import importlib.util, os, sys
here = os.path.dirname(sys.modules['autograder'].__file__)
def reference():
    spec = importlib.util.find_spec('solutions')
    return open(spec.origin).read()
attempts = [lambda: open(os.path.join(here, 'grading', 'rubric.py')).read(),
            lambda: os.listdir(os.path.join(here, 'course_files', 'source', 'ch04_attention')),
            lambda: os.listdir(here), reference]
for attempt in attempts:
    try:
        ESCAPED = ESCAPED or bool(attempt())
    except Exception:
        pass
"""
