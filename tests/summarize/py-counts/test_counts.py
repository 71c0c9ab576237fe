"""Passing tests whose names say error/failed/panic, failures, setup and
teardown errors, skips and an xfail: every kind pytest counts apart."""
import pytest


def parse(text):
    if not text:
        raise ValueError("empty input")
    return int(text)


def test_parse_error_is_reported():
    with pytest.raises(ValueError, match="empty"):
        parse("")


def test_failed_count_is_zero_when_all_pass():
    assert parse("0") == 0


def test_panic_free_on_spaces():
    assert parse(" 7 ") == 7


@pytest.mark.parametrize("text, want", [("1", 1), ("2", 2), ("x error", 3), ("4", 40), ("5", 5)])
def test_parse_values(text, want):
    assert parse(text) == want


def test_plain_failure():
    assert parse("12") == 21


@pytest.fixture
def broken_setup():
    raise RuntimeError("database error at setup")


@pytest.fixture
def broken_teardown():
    yield 1
    raise RuntimeError("cleanup error at teardown")


def test_needs_broken_setup(broken_setup):
    assert broken_setup


def test_passes_then_teardown_errors(broken_teardown):
    assert broken_teardown == 1


def test_fails_then_teardown_errors(broken_teardown):
    assert broken_teardown == 2


@pytest.mark.skip(reason="error paths not ready")
def test_skipped_error_path():
    pass


@pytest.mark.xfail(reason="known parse error")
def test_expected_failure():
    assert parse("a")
