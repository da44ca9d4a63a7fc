"""nbgrader's gradebook: the client, the writer process, run locks, lateness,
submission times and late penalties."""
