"""Runs a command and prints its peak resident memory (MiB) after it ends:
  python peak.py COMMAND [ARGS...]"""
import resource
import subprocess
import sys

code = subprocess.run(sys.argv[1:]).returncode
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print(f"peak host memory {peak} MiB (exit {code})", flush=True)
sys.exit(code)
