"""How the kernel's run-queue wait (``gradcode.fidelity.usage``'s ``wait``) adds up against
the real seconds of a busy loop: on a core or waiting for one the whole time, so ``cpu + wait``
should equal the loop's seconds. Each probe is a fresh single-threaded process that spins for
``--seconds`` at one niceness, beside ``--loops`` busy loops at nice 0 (none: an idle machine).
Prints each probe's seconds, CPU, wait, time slices and the ratio ``(cpu + wait) / seconds``.

    python benchmarks/schedstat_wait.py --loops 4 --probes 5 --nice 0 19
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

PROBE = """
import json, time
from gradcode.fidelity import usage
began = usage.sample()
end = time.perf_counter() + {seconds}
while time.perf_counter() < end:
    pass
print(json.dumps(usage.between(began, usage.sample())))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loops", type=int, default=4, help="busy loops at nice 0 beside")
    parser.add_argument("--probes", type=int, default=5, help="probes per niceness")
    parser.add_argument("--seconds", type=float, default=0.2, help="each probe's busy loop")
    parser.add_argument("--nice", type=int, nargs="+", default=[0, 19])
    args = parser.parse_args()
    if not os.path.exists("/proc/self/schedstat"):
        sys.exit("schedstat_wait: this kernel keeps no schedstat (CONFIG_SCHED_INFO)")
    spin = "import time\nwhile True: pass"
    loops = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(args.loops)]
    environ = os.environ | {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    try:
        time.sleep(0.5)  # the loops on the cores first
        print(f"{os.uname().release}, {os.cpu_count()} cores, {args.loops} busy loops beside")
        print("nice  seconds    cpu    wait  slices  (cpu+wait)/seconds")
        for niceness in args.nice:
            for _ in range(args.probes):
                done = subprocess.run(
                    ["nice", "-n", str(niceness), sys.executable, "-c",
                     PROBE.format(seconds=args.seconds)],
                    capture_output=True, text=True, check=True, env=environ,
                )  # fmt: skip
                spent = json.loads(done.stdout)
                ratio = (spent["cpu"] + spent["wait"]) / spent["seconds"]
                print(
                    f"{niceness:4d}  {spent['seconds']:7.3f}  {spent['cpu']:6.3f}  "
                    f"{spent['wait']:6.3f}  {spent['slices']:6d}  {ratio:6.2f}"
                )
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


if __name__ == "__main__":
    main()
