"""Grades into the LMS by LTI 1.3 Advantage: the roster read through Names and Role Provisioning
Services, one line item per assignment and each student's total posted through Assignment and Grade
Services, safe to re-run and to resume.

``config`` reads the platform's registration and the tool's key from the instructor's own file;
``client`` speaks to the LMS through pylti1p3 (no JWT or OAuth code of ours); ``roster`` matches the
gradebook's students to the LMS's users; ``journal`` remembers what was posted; ``plan`` decides what to
post; ``sync`` is the command (``python -m autograder lti sync``) and ``report`` what it writes.
"""
