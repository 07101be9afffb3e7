/**
 * A real-ish Python module for property tests: classes with bases and decorators, loops,
 * comprehensions, try/with, generators, async code, nested functions, non-ASCII text and
 * multi-line strings inside blocks.
 */
export const SAMPLE_MODULE = `"""Inventory helpers — prix en €, tailles ≥ 0."""
import functools
import json
import typing
from collections import OrderedDict

_CACHE = {}
LIMIT = 10


def memoize(func):
    @functools.wraps(func)
    def wrapper(*args):
        if args in _CACHE:
            return _CACHE[args]
        result = func(*args)
        _CACHE[args] = result
        return result

    return wrapper


@memoize
def fibonacci(n):
    """Return the n-th Fibonacci number."""
    if n < 2:
        return n
    return fibonacci(n - 1) + fibonacci(n - 2)


def parse_price(text, default=0.0):
    label = "prix €"  # non-ASCII before the sites
    text = text.strip().replace("€", "")
    try:
        value = float(text)
    except ValueError:
        value = default
    else:
        if value < 0 or value > 1e6 and not label:
            raise ValueError(f"bad price {value!r}")
    finally:
        _CACHE.pop(text, None)
    return round(value, 2)


class Item(object):
    """One stock item."""

    kind = "item"

    def __init__(self, name, price, qty=1):
        self.name = name
        self.price = price
        self.qty = qty
        self.validate()

    def validate(self):
        if self.qty < 0:
            raise ValueError("qty must be ≥ 0")
        if not self.name:
            self.name = "?"
        else:
            self.name = self.name.strip()

    @property
    def total(self):
        return self.price * self.qty

    def __repr__(self):
        return f"Item({self.name!r}, {self.price}, {self.qty})"


class Inventory(OrderedDict, Item):
    def add(self, item, count=1):
        global LIMIT
        existing = self.get(item.name)
        if existing is not None and existing.price == item.price:
            existing.qty += count
        else:
            self[item.name] = item
        while len(self) > LIMIT:
            self.popitem(last=False)
        return self

    def total_value(self):
        return sum(item.total for item in self.values() if item.qty > 0)

    @typing.overload
    def find(self, key: str) -> Item: ...

    @typing.overload
    def find(self, key: int) -> Item: ...

    def find(self, key):
        if isinstance(key, int):
            return list(self.values())[key]
        return self[key]

    def cheapest(self, k=3):
        ranked = sorted(self.values(), key=lambda item: (item.price, item.name))
        return [item.name for item in ranked[:k]]

    def dump(self, path):
        payload = {name: [i.price, i.qty] for name, i in self.items()}
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(payload, fh)
            fh.write("\\n")
        return len(payload)

    def load(self, path):
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        for name, (price, qty) in data.items():
            if qty <= 0:
                continue
            self.add(Item(name, price, qty))
        return self.total_value()

    def report(self):
        lines = []
        for index, item in enumerate(self.values(), start=1):
            lines.append(f"{index:>3} {item.name:<10} {item.total:8.2f}")
        header = """Inventory
---------"""
        return header + "\\n" + "\\n".join(lines)


def batched(items, size):
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


async def fetch_all(client, urls, retries=2):
    results = {}
    for url in urls:
        attempt = 0
        while attempt <= retries:
            try:
                async with client.get(url) as response:
                    results[url] = await response.text()
                break
            except ConnectionError:
                attempt += 1
    return results


def histogram(values, bins=5, lo=0, hi=100):
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        if lo <= v < hi:
            counts[int((v - lo) // width)] += 1
    return {round(lo + i * width, 1): c for i, c in enumerate(counts) if c}


def summarize(numbers):
    if not numbers:
        return None
    total = 0
    smallest = largest = numbers[0]
    for n in numbers:
        total += n
        if n < smallest:
            smallest = n
        elif n > largest:
            largest = n
    mean = total / len(numbers)
    return {"mean": mean, "min": smallest, "max": largest, "even": [n for n in numbers if n % 2 == 0]}
`;
