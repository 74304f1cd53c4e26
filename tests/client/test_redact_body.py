"""The scan of every answer's body for an echoed key: whichever search it takes (``rfind``
for keys up to ``SHORT_KEY`` bytes, ``in`` past that), it finds exactly the echoes a
plain substring test finds, and replaces every one of them."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sports_posts._redact import REDACTED, SHORT_KEY, redact_body

# Keys drawn from a small alphabet, and bodies built from pieces of the key, so that
# near-copies, overlaps and echoes at either end are common rather than one in a million.
_ALPHABET = "ab-_0"


@st.composite
def key_and_body(draw: st.DrawFn) -> tuple[str, bytes]:
    length = draw(st.sampled_from([1, 2, 9, 40, SHORT_KEY - 1, SHORT_KEY, SHORT_KEY + 1, 100]))
    key = "".join(draw(st.lists(st.sampled_from(_ALPHABET), min_size=length, max_size=length)))
    raw = key.encode()
    pieces = st.one_of(
        st.just(raw),  # the whole key
        st.builds(lambda i: raw[:i], st.integers(0, len(raw))),  # a prefix
        st.builds(lambda i: raw[i:], st.integers(0, len(raw))),  # a suffix
        st.builds(  # the key with one byte changed
            lambda i, c: raw[:i] + c + raw[i + 1:], st.integers(0, len(raw) - 1), st.sampled_from([b"x", b"a", b"\""])
        ),
        st.binary(max_size=8),
    )
    body = b"".join(draw(st.lists(pieces, max_size=12)))
    return key, body


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(key_and_body())
def test_the_scan_finds_what_a_substring_test_finds_and_leaves_no_echo(case: tuple[str, bytes]) -> None:
    key, body = case
    raw = key.encode()
    out = redact_body(body, key)
    if raw in body:
        assert out == body.replace(raw, REDACTED.encode())
        assert raw not in out or raw in REDACTED.encode()
    else:
        assert out is body, "an answer without an echo is not copied"


@pytest.mark.parametrize("length", [SHORT_KEY, SHORT_KEY + 1])
@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_an_echo_anywhere_is_found_on_both_sides_of_the_bound(length: int, where: str) -> None:
    key = ("k3y-" * length)[:length]
    filler = b'{"text": "' + b"x" * 100_000 + b'"}'
    cut = {"start": 0, "middle": len(filler) // 2, "end": len(filler)}[where]
    body = filler[:cut] + key.encode() + filler[cut:]
    out = redact_body(body, key)
    assert key.encode() not in out
    assert out.count(REDACTED.encode()) == 1
    assert len(out) == len(body) - length + len(REDACTED)


def test_a_body_built_against_the_key_is_still_answered_right() -> None:
    """The skip search's worst case (near-copies of the key everywhere) changes the cost,
    never the answer."""
    key = "ab" + "a" * (SHORT_KEY - 2)
    body = b"a" * 200_000 + key.encode()
    assert redact_body(body, key).endswith(REDACTED.encode())
    assert redact_body(body[:-1], key) == body[:-1]
