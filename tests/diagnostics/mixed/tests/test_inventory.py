from inventory import Inventory


def test_add_counts():
    inv = Inventory()
    inv.add("apple", 2)
    inv.add("apple", 3)
    assert inv.items["apple"] == 6


def test_take_unknown_item():
    inv = Inventory()
    inv.take("pear", 1)


def test_restock_from_bad_file():
    inv = Inventory()
    inv.restock_from("{not json")


def test_take_some():
    inv = Inventory()
    inv.add("fig", 3)
    inv.take("fig", 1)
    assert inv.items["fig"] == 2
