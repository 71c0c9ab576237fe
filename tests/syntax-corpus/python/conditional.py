import sys
from typing import overload

if sys.version_info >= (3, 8):
    def compat():
        return "new"
else:
    def compat():
        return "old"

try:
    from fast import speedup
except ImportError:
    def speedup(x):
        return x

with open(__file__) as handle:
    def inside_with():
        return handle


@overload
def convert(x: int) -> int: ...
@overload
def convert(x: str) -> str: ...
def convert(x):
    return x


@register(key=lambda item: item.name)
class Registry:
    def __init__(self):
        self.items = []

    def add(self, item):
        class Wrapper:
            def __init__(self, inner):
                self.inner = inner

            def __repr__(self):
                return f"Wrapper({self.inner!r})"
        self.items.append(Wrapper(item))
