"""Faults on the cluster during a run: a node's link down for a while, a straggling link
(``cut``: ``gradcode cluster cut``), and a node lost for good, killed or cut off, and given
back after the command with ``--return`` (``lose``: ``gradcode cluster lose``). When they
strike, the command and the record are ``during``'s."""
