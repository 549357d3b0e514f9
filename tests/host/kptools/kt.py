# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""What the kptools tests share: scripts/ on the import path, and checks
that print "PASS name" / "FAIL name: why", then "unit: end"."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))


class Checks:
    def __init__(self, prefix):
        self.prefix = prefix
        self.fails = 0

    def __call__(self, name, cond, why=""):
        if cond:
            print(f"PASS {self.prefix}-{name}")
        else:
            self.fails += 1
            print(f"FAIL {self.prefix}-{name}: {why}")

    def done(self):
        print("unit: end")
        sys.exit(1 if self.fails else 0)
