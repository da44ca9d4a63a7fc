"""Everything an instructor gets from a batch (``write.write_outputs``): grades.csv, the feedback
pages (ours and nbgrader's per-notebook ones), results.json and the class report.

This package's ``__init__`` holds nothing: its members import one another, never it.
"""
