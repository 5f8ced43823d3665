"""Fidelity: what decided a run's times, its links (or injected delays) or the machine
emulating them, measured run by run (after Mininet-HiFi's fidelity monitors, Handigol et al.,
CoNEXT 2012).

An emulated cluster on one machine measures the links only while the machine keeps up: with
more ranks than cores, what a rank does between its messages waits for a core, and the times
measure the machine. Every rank samples what it cost the machine (``usage``: its time on a
core and waiting for one, from ``/proc/self/task/*/schedstat``; its wake-ups and context
switches), rank 0 the machine's CPU pressure (``pressure``: ``/proc/pressure/cpu``), and the
run's ``summary.json`` carries the record (``record``) with the verdict of one rule
(``rule``), set by measurement (``docs/measurements/fidelity.md``).
"""
