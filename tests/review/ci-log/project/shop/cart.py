"""A shopping cart with a discount."""


class Cart:
    def __init__(self):
        self.items = []

    def add(self, name, price, quantity=1):
        self.items.append((name, price, quantity))

    def total(self, discount=0):
        subtotal = sum(price * quantity for _, price, quantity in self.items)
        # The discount is a percentage, applied once.
        return subtotal - subtotal * discount


def parse_price(text):
    whole, _, cents = text.partition(".")
    return int(whole) + int(cents) / 100
