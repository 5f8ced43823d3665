"""A run file and what it asks for, without MPI: the schema (``config``: the run YAML parsed
strictly into a ``RunConfig``, assembled from one module per block in ``blocks``, each read
through the strict mapping reader ``section``; the closed word sets of some keys in
``words``), the plan (``plan``: the code, its topology, who holds what, every cross-check), the
choices a run makes (``choice``, ``collection``), the injected stragglers (``stragglers``) and
single-port receivers (``bandwidth``), the run's data (``dataset``), sets of runs
(``experiment``) and the uncoded run computed serially (``reference``). The rank program
(``gradcode.train``), the launchers (``gradcode.launch``) and the readers of finished runs
(``gradcode.runlogs``) build on it; it imports none of them.
"""
