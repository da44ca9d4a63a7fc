"""Sandboxed execution of student code: fork server, worker, RPC and isolation layers.

Nothing in this package imports the rubric, the reference engine or the
hidden tests: the fork server imports only this package, numpy, IPython and
matplotlib, so a student process that escaped would find nothing secret in
its own memory.
"""
