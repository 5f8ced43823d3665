"""Latency on the cluster's links, held in user space (this kernel loads no ``netem``): the
switch's netfilter queue rules and the delayer started, changed, checked and stopped
(``delay``); the delayer process itself (``delayer``: ``python -m
gradcode.cluster.latency.delayer``, in the switch's namespace); the netfilter queue's netlink
messages it speaks (``nfqueue``); the links at another latency for the length of one command
(``relatency``: ``gradcode cluster latency``)."""
