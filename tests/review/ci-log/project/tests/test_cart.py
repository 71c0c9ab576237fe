from shop.cart import Cart, parse_price


def test_empty_cart_costs_nothing():
    assert Cart().total() == 0


def test_total_applies_a_percentage_discount():
    cart = Cart()
    cart.add("pen", 10, quantity=2)
    assert cart.total(discount=10) == 18


def test_parse_price_reads_cents():
    assert parse_price("3.50") == 3.5


def test_parse_price_reads_whole_numbers():
    assert parse_price("3") == 3
