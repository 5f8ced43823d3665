"""The run file's blocks, one module each: the block's dataclass and the parser that fills it
from its mapping (read through ``gradcode.runfile.section``). ``gradcode.runfile.config``
assembles them into a ``RunConfig``; the keys are in the guide's run-file reference."""
