"""Feedback on submit: ``python -m autograder watch`` grades each submission as it reaches
nbgrader's exchange and publishes its pages where ``nbgrader release_feedback`` would.

- ``config``: the exchange and the instructor's ``c.FeedbackOnSubmit`` settings, from the course;
- ``inbound``: the exchange's inbound folder, read as hostile input (names, kinds, secrets);
- ``journal``: what was handled, appended and synced line by line (nothing lost, nothing twice);
- ``limits``: how many checks a student may use per period;
- ``duedate``: the due date and extension, read from the gradebook without writing it;
- ``grading``: one submission through the hardened grader (here, or on Dask), visible tests for "visible";
- ``pages`` and ``publish``: what a student sees, written under nbgrader's hash of the secret;
- ``service``: the loop (``watch``), ``wake``: inotify or polling, ``summary``: the report's section.

It never writes the gradebook: the official grade is the batch after the deadline.
"""
