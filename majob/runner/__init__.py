"""Running training code on this machine, as a ModelArts training container would.

Spec-free, shared with the emulator's executor: ``nodes`` (node processes in their own
sessions, their output pumped into logs, stopped together), ``lines`` (cutting output into
capped lines), ``host`` (interpreter, free port, the environment a container starts from),
``standin`` (the torch_npu CPU stand-in), ``shellcmd`` (a custom image's command as ``/bin/sh``
runs it here).

The local stage, over a ``JobSpec``: ``local`` (``run_local``), ``checks`` (before anything
starts), ``layout`` (container paths, environment, arguments: pure), ``tree`` (the run's tree
on disk), ``guard`` (writes outside the outputs), ``outputs``, ``record`` and ``result`` (what
a run did), ``failures`` (the error a run that did not pass raises), ``runs`` (the runs kept).
"""
