from shop.cart import Cart, Item, checkout
from shop.pricing import tax


def test_add():
    cart = Cart()
    cart.add(Item("pen", 2))
    assert len(cart.items) == 1


def test_total():
    cart = Cart()
    cart.add(Item("pen", 2, 3))
    assert cart.total() == 6


class TestDiscount:
    def test_unknown_code(self):
        cart = Cart([Item("book", 10)])
        assert checkout(cart, "BOGUS") == 10

    def test_half(self):
        cart = Cart([Item("book", 10)])
        assert checkout(cart, "HALF") == 5


def test_tax():
    assert tax(100, 0.2) == 20
