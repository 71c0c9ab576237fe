"""Stock keeping with deliberate errors, for the mixed-output captures."""
import json


class OutOfStock(Exception):
    pass


class Inventory:
    def __init__(self):
        self.items = {}

    def add(self, name, count):
        self.items[name] = self.items.get(name, 0) + count

    def take(self, name, count):
        try:
            left = self.items[name] - count
        except KeyError as e:
            raise OutOfStock(name) from e
        if left < 0:
            raise OutOfStock(name)
        self.items[name] = left

    def restock_from(self, text):
        try:
            data = json.loads(text)
        except ValueError:
            raise OutOfStock("bad restock file")
        for name, count in data.items():
            self.add(name, count)
