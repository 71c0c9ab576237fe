import functools


def plain():
    return 1


@functools.lru_cache(maxsize=None)
def cached(x):
    return x * 2


@first
@second(
    "multi-line decorator argument",
)
@third
def stacked(a, b):
    """Docstring."""
    return a + b


@dataclass
class Point:
    x: int
    y: int

    @property
    def norm(self):
        return (self.x ** 2 + self.y ** 2) ** 0.5

    @staticmethod
    @other
    def make():
        return Point(0, 0)
    # a comment after the last method, indented like the body

# a comment at module level
VALUE = plain()
