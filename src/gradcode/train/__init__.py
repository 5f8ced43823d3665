"""The rank program: coded gradient descent as real MPI jobs.

``mpiexec -n N python -m gradcode.train RUN.yaml`` (or ``srun --mpi=pmi2 -n N ...``) trains one
configuration with one master (rank 0) and ``n = N - 1`` workers; the run file's schema and
plan are ``gradcode.runfile``'s, its launchers ``gradcode.launch``'s, and ``run`` gives the
phases of a job.

Modules, one idea each: ``run`` (a job's phases; the topology picks the rank program),
``master``, ``reducers`` (the master's one reduction, chosen from the plan: the code's
decoder, a tree's, or a robust aggregator, with the omniscient attack's emulation), ``record``
(the master's per-iteration record), ``worker``, ``ring`` (Ring-AllReduce), ``tree`` (a tree
code's sub-communicators), ``runtime`` (what every rank knows of its place), ``protocol`` (tags
and message layouts), ``transport`` (non-blocking receive ports and send queues), ``pulling``
(a collector's pulls), ``distribution`` (how the model reaches the workers), ``rows``,
``session`` (rank 0's optimizer state, metrics, outputs), ``checkpoint``, ``node`` (where each
rank ran), ``shutdown``, ``linkprobe`` (an MPI program of its own: message time against size on
the links) and ``faults`` (failed ranks, spares, caught liars and the master's roster).

Outputs (``--out DIR``, else ``output:`` in the YAML, else ``runs/<name>``): ``log.jsonl`` (one
record per iteration), ``summary.json`` (with ``world_size``), ``model.npy``, ``ranks.json``
(pid and host of every rank), ``checkpoints/`` and, with ``log.trajectory``,
``trajectory.npy`` (their formats: ``gradcode.runlogs``). Rerunning the same command resumes
from the newest checkpoint.

Importing this package changes nothing in the process: every rank limits BLAS to one thread
when it starts training (``gradcode.blas``), and the launcher sets the same for the job.
"""
