"""An emulated multi-node cluster on one machine (root): ``gradcode cluster up|down|status``.

It provisions machines that runs then use, and is no part of the runtime (``gradcode.train``):
network namespaces as nodes, each with its own hostname, address and rate-limited link to a
switch (``network``), with a latency where asked (``delay``: the switch's netfilter queue
rules; ``delayer``: the process that holds the packets, over ``nfqueue``'s netlink messages;
``relatency``: another latency during a command); a multi-node SLURM on them (``slurm``);
hydra's launcher for runs
without SLURM (``launcher``); a link probe (``probe``); a state file of everything made, so
``down`` removes it all, also after a killed ``up`` (``state``; a run reads it only to say
when its stated links differ from those in force, ``links.stated_links_mismatch``, and
``links.links_record`` for its summary). The spec (``spec``) is
validated before anything is made.
"""
