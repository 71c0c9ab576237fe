"""Only module-level code, then a function at the very end."""
import sys

CONSTANT = 1
if CONSTANT:
    print("module level")
for i in range(3):
    print(i)
try:
    import json
except ImportError:
    json = None


def last_function():
    return sys.argv
