"""A syntax error: Python prints a trace without a Traceback header."""


def total(values):
    return sum(values


print(total([1, 2]))
