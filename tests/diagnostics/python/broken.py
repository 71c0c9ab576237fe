"""A file with a syntax error in one function; the others still parse."""


def fine(a, b):
    return a + b


def bad(x):
    if x >
        return 1


class Survivor:
    def method(self):
        return undefined_name
