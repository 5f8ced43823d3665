"""Runs that survive failed workers: what every rank knows of failed ranks and what a failure
means for the run (``failures``), and spares that take a dead worker's place (``spares``)."""
