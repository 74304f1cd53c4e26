"""The keyed HMAC kept per secret gives the standard library's digest on every call: each
call copies it, so no body ever feeds into the next one's digest."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from sports_posts.webhooks import SignatureVerificationError, sign_payload, verify_signature
from sports_posts.webhooks.signature import _hmac_for, _hmac_sha256


@pytest.mark.parametrize("secret", ["whsec_keyed_text", b"whsec_keyed_bytes"])
def test_each_digest_is_hmac_new_of_that_body_alone(secret: str | bytes) -> None:
    key = secret.encode() if isinstance(secret, str) else secret
    for body in (b"", b"one", b"two" * 1000, b"one"):
        assert _hmac_sha256(secret, body) == hmac.new(key, body, hashlib.sha256).digest()
    keyed = _hmac_for(secret)
    assert keyed.copy().digest() == hmac.new(key, b"", hashlib.sha256).digest()  # the kept one is untouched


def test_a_body_verified_after_another_one_is_checked_on_its_own() -> None:
    secret = "whsec_keyed_sequence"
    first, second = b'{"a":1}', b'{"b":2}'
    verify_signature(first, sign_payload(first, secret), secret)
    verify_signature(second, sign_payload(second, secret), secret)
    with pytest.raises(SignatureVerificationError):
        verify_signature(second, sign_payload(first, secret), secret)
