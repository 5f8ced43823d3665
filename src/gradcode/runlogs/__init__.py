"""Finished runs read back: the files a run writes (``log``: ``log.jsonl``, ``summary.json``,
``model.npy``; ``nodelog``: a tree's ``nodes.jsonl``), what their timings imply (``timings``:
predicted iteration times, link floors), and whether a job saw the ranks it asked for
(``world_size``). The fit, the figures and the pipeline import this without the runtime; the
runtime imports it for the file formats it writes.
"""
