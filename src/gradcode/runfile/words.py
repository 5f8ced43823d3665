"""The closed sets of words some run-file keys take, apart from the parser so that a reader
of one word (the emulated cluster's node loss, the runtime's ways) imports only these."""

#: ``adversaries.caught``: a caught liar keeps answering, or leaves the run as a failed worker
CAUGHT_POLICIES = ("keep", "drop")

#: ``aggregator.below_tolerance``: stop the run, or aggregate anyway and log the iteration
BELOW_TOLERANCE_POLICIES = ("stop", "continue")

#: ``runtime.distribution``: how the model reaches the workers (``gradcode.train.distribution``)
DISTRIBUTION_WAYS = ("auto", "isend", "scatter")
#: ``runtime.collection``: how results reach the master (``gradcode.runfile.collection``)
COLLECTION_WAYS = ("auto", "push", "pull")

#: ``runtime.data``: how a worker gets its partitions: sent by rank 0, or loaded by the worker
#: from the prepared data (a file system every node shares)
DATA_DELIVERY = ("send", "load")

#: how ``faults.lose_node`` loses a node: every process on it killed, or its link down
NODE_LOSS = ("kill", "link")
