"""Something done to the cluster while a command runs, shared by ``network.rerate``,
``latency.relatency``, ``faults.cut`` and ``faults.lose``: when (``--after`` seconds or an
iteration of the run's log), the command run meanwhile, its exit status and the record
(``command``); SIGTERM and SIGHUP turned into an exception, so that the cluster is put back and
the signal passed on (``signals``)."""
