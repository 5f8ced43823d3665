"""An emulated multi-node cluster on one machine (root): ``gradcode cluster up|down|status``.

It provisions machines that runs then use, and is no part of the runtime (``gradcode.train``):
network namespaces as nodes, each with its own hostname, address and rate-limited link to a
switch (``network``); a multi-node SLURM on them (``slurm``); hydra's launcher for runs
without SLURM (``launcher``); a link probe (``probe``); a state file of everything made, so
``down`` removes it all, also after a killed ``up`` (``state``; a run reads it only to say
when its stated links differ, ``state.stated_links_mismatch``). The spec (``spec``) is
validated before anything is made.
"""
