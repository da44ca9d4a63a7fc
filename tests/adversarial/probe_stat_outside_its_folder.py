"""Stats paths it was never given (Landlock checks opening, not stat): the course's gradebook and submissions,
the machine's accounts and homes. Any answer tells the student what exists, how large and since when.

Stopped by the worker's own root (issue 35, item 9): in its mount namespace only Python, the system libraries
and its own folder exist. (Not the course folder itself: where the course holds the virtual environment, as this
checkout does, its path is there, as an empty folder of the worker's own root.)
"""
KIND = "probe"
LAYER = 'a root of its own'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
import os
seen = []
for path in (COURSE + '/gradebook.db', COURSE + '/submitted', COURSE + '/nbgrader_config.py', '/etc/passwd',
             '/home', '/var', '/srv', '/usr/bin', '/usr/local/share'):
    try:
        os.stat(path)
        seen.append(path)
    except OSError:
        pass
ESCAPED = bool(seen)
"""
