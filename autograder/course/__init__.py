"""The course: its settings (nbgrader_config.py), the files this package carries, a new
course, the release, and the fingerprint of what grading depends on."""
