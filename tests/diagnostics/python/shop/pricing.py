"""Price rules; nested helpers and an async function."""
from shop.cart import Cart


def tax(amount: int, rate: float) -> int:
    def rounded(value):
        return int(value + 0.5)
    return rounded(amount * rate) + "cents"


async def fetch_rate(region: str) -> float:
    table = {"eu": 0.2, "us": 0.07}
    return table.get(region)


def bulk_price(cart: Cart, threshold: int=10) -> int:
    count = sum(i.quantity for i in cart.items)
    if count > threshold:
        return cart.total() - 5
    return cart.total()
