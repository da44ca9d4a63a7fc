"""Sandboxed execution of student code: fork server, worker, RPC and isolation layers.

Nothing in this package imports the rubric, the reference engine or the
hidden tests: the fork server imports only this package, numpy, IPython,
matplotlib and pyseccomp, so a student process that escaped would find nothing
secret in its own memory.

Grader side: ``forkclient`` (ForkServer), ``handle`` (WorkerHandle), ``pool`` (workers started
ahead, ended ones cleaned up behind), ``replies`` (what each reply
must look like), ``convert`` (the value codec, both sides), ``rpc`` (frames).
Worker side: ``forkserver``, ``worker``, and the layers: ``layers`` (their order), ``status`` (a layer's status
as one type, and each layer's one name),
``namespaces``, ``landlock``, ``seccomp``, ``cgroups``, ``limits``.
"""
