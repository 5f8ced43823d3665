"""Runs that survive failed workers: what every rank knows of failed ranks and what a failure
means for the run (``failures``), spares that take a dead worker's place (``spares``), and
caught liars, checked and, by the run file's policy, dropped like failed workers (``caught``)."""
