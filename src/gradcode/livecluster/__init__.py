"""The emulated cluster that is up on this machine, as a run reads it.

``gradcode cluster`` writes its state under one folder (``files``: the state file, the
delayer's setting and status); this package names those files and reads them: the spec they
hold (``spec``), whether the delayer lives (``delayer``), and what a run compares with its
stated links and records in its summary (``links``). The cluster's machinery
(``gradcode.cluster``) writes the files and imports this package; the runtime
(``gradcode.launch``, ``gradcode.train``) reads them only through it and imports nothing of the
cluster, whose machinery itself starts jobs through the launcher.
"""
