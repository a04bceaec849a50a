# Runs a file the way ipykernel runs a cell: compiled under a name of the
# form /tmp/ipykernel_PID/NUMBER.py, so faulthandler names its frames as it
# would in a notebook. Usage: python run_cell.py CELL.py
import os
import sys

with open(sys.argv[1]) as f:
    source = f.read()
name = "/tmp/ipykernel_%d/%d.py" % (os.getpid(), abs(hash(source)) % 10**10)
exec(compile(source, name, "exec"), {"__name__": "__main__"})
