/** A small calculator project and its tests: enough sites for a few dozen candidates. */
export const LIB = `def add(a, b):
    return a + b


def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def mean(values):
    total = 0
    for value in values:
        total = total + value
    return total / len(values)


class Counter:
    def __init__(self):
        self.count = 0

    def bump(self, step=1):
        self.count = self.count + step
        return self.count
`;

export const TESTS = `from calc import Counter, add, clamp, mean


def test_add():
    assert add(2, 3) == 5


def test_clamp():
    assert clamp(5, 0, 3) == 3
    assert clamp(-1, 0, 3) == 0
    assert clamp(2, 0, 3) == 2


def test_mean():
    assert mean([1, 2, 3]) == 2


def test_counter():
    counter = Counter()
    counter.bump()
    assert counter.bump(2) == 3
`;
