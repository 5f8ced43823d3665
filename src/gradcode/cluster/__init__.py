"""An emulated multi-node cluster on one machine (root): ``gradcode cluster ...`` (``cli``).

It provisions machines that runs then use, and is no part of the runtime (``gradcode.train``,
``gradcode.launch``), which imports nothing of it: what a run reads of the cluster that is up
(its links in force, the delayer alive, the dilation) the cluster writes under its runtime
folder and the run reads through ``gradcode.livecluster``, below both. Its rooms, in order,
each importing only ``spec``, ``state`` and those before it:

- ``spec``: the validated description of a cluster (nodes, addresses, link rates and
  latencies), checked before anything is made; ``state``: the state file of everything made,
  written before it is made, so ``down`` removes it all, also after a killed ``up``;
- ``during/``: something done to the cluster while a command runs: the trigger, the command,
  signals passed on, the record;
- ``network/``: network namespaces as nodes, each with its own hostname, address and
  rate-limited (tbf) link to a switch, and permanent neighbour entries (``namespaces``); the
  links at another rate during a command (``rerate``); a link probe (``probe``);
- ``latency/``: a latency where asked: the switch's netfilter queue rules and the delayer's
  life (``delay``), the process that holds the packets (``delayer``) over ``nfqueue``'s netlink
  messages, another latency during a command (``relatency``);
- ``slurm``: a multi-node SLURM on the nodes;
- ``mpi/``: MPICH pinned to TCP on the links (``mpich``), hydra's launcher for runs without
  SLURM (``hydra``), Open MPI with ULFM (``ulfm``) and its ranks moved to their nodes
  (``noderank``);
- ``faults/``: a link down for a while (``cut``), a node lost for good (``lose``);
- ``control``: ``up``, ``down`` and ``status``; ``cli``: the command line.
"""
