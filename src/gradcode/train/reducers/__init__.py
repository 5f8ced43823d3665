"""The master's reduction of what arrives, behind one interface (``Reducer``, ``base``): the
code's own decoder (``decoding``), a tree's reduction (``tree``, which a tree's parents ask
too) or a robust aggregator (``aggregating``), with the omniscient attack's emulation
(``forgery``) before it; ``choice`` picks one from the plan, once."""
