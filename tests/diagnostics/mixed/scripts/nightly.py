"""Logs a handled failure with its traceback, then crashes on a chained one."""
import sys
import traceback

sys.path.insert(0, ".")
from inventory import Inventory  # noqa: E402


def report(inv):
    try:
        inv.take("plum", 1)
    except Exception:
        traceback.print_exc()


def main():
    inv = Inventory()
    report(inv)
    inv.restock_from("[1, 2")


main()
