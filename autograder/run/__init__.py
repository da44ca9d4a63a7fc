"""Running the grader: one submission in the sandbox, the batch, the local pool, progress."""
