"""Four hundred checks of a tiny parser, three of them failing (early, middle, late)."""
import pytest


def parse_amount(text):
    whole, _, cents = text.partition(".")
    return int(whole) * 100 + int(cents or 0)


@pytest.mark.parametrize("n", range(400))
def test_round_trip(n):
    text = f"{n}.{n % 100:02d}"
    expected = n * 100 + n % 100
    if n in (7, 211, 396):
        text = f"{n}.{n % 10}"  # one-digit cents: the parser reads "5" as 5 cents, not 50
        expected = n * 100 + (n % 10) * 10
    assert parse_amount(text) == expected
