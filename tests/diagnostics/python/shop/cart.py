"""Shopping cart with deliberate lint, type and logic errors."""
import os
import functools
from dataclasses import dataclass, field


@dataclass
class Item:
    name: str
    price: int
    quantity: int = 1

    def subtotal(self) -> int:
        return self.price * self.quantity


@dataclass
class Cart:
    items: list[Item] = field(default_factory=list)

    def add(self, item: Item) -> None:
        self.items.append(item)

    @functools.lru_cache(maxsize=None)
    @staticmethod
    def describe(count: int) -> str:
        return f"{count} items"

    def total(self) -> int:
        total = 0
        for item in self.items:
            total += item.subtotal()
        return str(total)

    def discount(self, code: str) -> int:
        rates = {"HALF": 50, "TENTH": 10}
        rate = rates[code]
        return self.total() * rate // 100

    def remove(self, name):
        unused = len(self.items)
        self.items = [i for i in self.items if i.name != nme]

    class Receipt:
        def render(self, cart: "Cart") -> str:
            lines = [f"{i.name}: {i.price}" for i in cart.items]
            return "\n".join(lines) + undefined_footer


def checkout(cart: Cart, code: str | None = None) -> int:
    if code:
        return cart.discount(code)
    return cart.total()
