"""The cluster's network: one namespace per node with its own hostname, a switch's bridge, a
veth pair per node with a tbf rate limit in both directions, permanent neighbour entries, and
running a command in a node (``namespaces``); the links at another rate for the length of one
command (``rerate``: ``gradcode cluster rate``); one TCP stream timed across a link
(``probe``: ``gradcode cluster measure``)."""
