"""Per-student seeds: stable across runs and machines (sha256, never the built-in hash())."""
from __future__ import annotations

import hashlib

import numpy as np

from ..course.settings import DEFAULT_ASSIGNMENT, DEFAULT_COURSE_ID
from ..records import name_digest


def student_seed(student_id: str, course: str = DEFAULT_COURSE_ID, assignment: str = DEFAULT_ASSIGNMENT) -> int:
    """A 64-bit seed from course id, assignment and student id (the defaults: the bundled chapter): the
    first 8 bytes of the names' digest (``records.name_digest``, which takes any folder name)."""
    return int(name_digest(f"{course}\x1f{assignment}\x1f{student_id}", 16), 16)


def check_rng(seed: int, grade_id: str, check: str) -> np.random.Generator:
    """One generator per check, so adding a check never shifts another check's cases."""
    digest = hashlib.sha256(f"{grade_id}\x1f{check}".encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "big")])
