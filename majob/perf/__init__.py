"""Performance: profiling data of a run, read and diagnosed (``majob perf``)."""
