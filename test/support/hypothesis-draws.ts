/**
 * A test module over Hypothesis: `test_draw` draws integers and `test_seen` then fails with
 * how many it drew and a digest of them, so two runs drew the same examples when their
 * `test_seen` reasons are equal.
 */
export const HYPOTHESIS_DRAWS = `import hashlib

from hypothesis import given, strategies as st

SEEN = []


@given(st.integers())
def test_draw(x):
    SEEN.append(x)


def test_seen():
    assert not SEEN, "drew %d: %s" % (len(SEEN), hashlib.sha1(repr(SEEN).encode()).hexdigest())
`;
