"""Distributed training runtime: coded gradient descent as real MPI jobs.

``mpiexec -n N python -m gradcode.train RUN.yaml`` (or ``srun --mpi=pmi2 -n N ...``) trains one
configuration with one master (rank 0) and ``n = N - 1`` workers; see ``config`` for the YAML
schema and ``run`` for the phases of a job.

Modules, one idea each: ``config`` (the run YAML, validated strictly), ``plan`` (scheme and
topology, cross-checks), ``dataset`` (loading, trimming, partitioning), ``protocol`` (tags and
message layouts), ``transport`` (non-blocking receive ports and send queues), ``master``,
``worker``, ``tree`` (CodedReduce sub-communicators), ``ring`` (Ring-AllReduce), ``stragglers``
(injected delays), ``bandwidth`` (single-port receivers), ``session`` (rank 0's optimizer state,
metrics, outputs), ``checkpoint``, ``log``, ``shutdown``, ``reference`` (the uncoded run
computed serially, for tests and comparisons), ``timings`` (what logged timings imply, and
what the simulator predicts for the injected delays), ``launch`` (starting jobs from Python)
and ``cli`` (``gradcode train check|command|run``).

Outputs (``--out DIR``, else ``output:`` in the YAML, else ``runs/<name>``): ``log.jsonl`` (one
record per iteration), ``summary.json`` (with ``world_size``), ``model.npy``, ``ranks.json``
(pid and host of every rank), ``checkpoints/`` and, with ``log.trajectory``,
``trajectory.npy``. Rerunning the same command resumes from the newest checkpoint.

Importing this package changes nothing in the process: every rank limits BLAS to one thread
when it starts training (``gradcode.blas``), and the launcher sets the same for the job.
"""
