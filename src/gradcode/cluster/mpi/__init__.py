"""MPI across the emulated nodes: MPICH pinned to TCP on each node's link (``mpich``:
``MPICH_ENV``, and ``python -m gradcode.cluster.mpi.mpich`` in front of ``srun`` under the
slurm-cluster profile); hydra's ``mpiexec`` over the nodes without SLURM (``hydra``: ``gradcode
cluster mpiexec``); Open MPI with ULFM from the master's node (``ulfm``: ``gradcode cluster
ulfm``), each rank moving itself to its node (``noderank``: ``python -m
gradcode.cluster.mpi.noderank``). Starting training jobs in general is ``gradcode.launch``'s."""
