"""Rubric checks, one file per exercise (``ex3_memory.py`` holds ex3_memory's and ex3_crossover's), helpers
shared by several in ``_base``, ``_attention`` and ``_counts``; each check is a small function
``(student, rng) -> Outcome``, and ``autograder/grading/rubric.py`` lists them with their points."""
