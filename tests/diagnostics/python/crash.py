"""Run directly: an uncaught exception raised three frames deep."""
from shop.cart import Cart, Item, checkout


def main():
    cart = Cart([Item("lamp", 30)])
    print(checkout(cart, "SPRING"))


if __name__ == "__main__":
    main()
