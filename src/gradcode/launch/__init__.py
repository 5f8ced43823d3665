"""Starting training jobs: from Python (``jobs``: ``mpiexec`` with a sane environment), on the
right MPI library (``mpilib``: MPICH's hydra, Open MPI with ULFM), surviving dead ranks
(``ulfm``: ``python -m gradcode.launch.ulfm``), with workers killed from outside (``inject``),
and ``gradcode train check|command|run|inject`` (``cli``). The job itself is
``python -m gradcode.train RUN.yaml`` (``gradcode.train``).
"""
