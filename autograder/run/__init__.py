"""Running the grader: one submission in the sandbox, the batch, the local pool,
progress, and the lifecycle of every process a run starts."""
