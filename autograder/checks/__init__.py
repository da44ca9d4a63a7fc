"""Rubric checks, one file per grade cell; each check is a small function ``(student, rng) -> Outcome``."""
