"""verify_signature / sign_payload: GitHub's X-Hub-Signature-256 scheme under X-Service-Signature."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sports_posts import ParameterError, SignatureVerificationError
from sports_posts.webhooks import WebhookHeaders, sign_payload, verify_signature

# GitHub's published test vector: it keeps its text, so the secret watch (no prefix) skips it.
GITHUB_SECRET = "It's a Secret to Everybody"
GITHUB_PAYLOAD = "Hello, World!"
GITHUB_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
BODY = b'{"event":"breaking_news","data":{"id":"1"}}'
SECRET = "whsec_s3cret"

# A shared CI machine can be slow: no per-example deadline, no "too slow" health check.
LOADED_MACHINE = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_githubs_published_example_verifies() -> None:
    verify_signature(GITHUB_PAYLOAD.encode(), GITHUB_SIGNATURE, GITHUB_SECRET)
    verify_signature(GITHUB_PAYLOAD, GITHUB_SIGNATURE, GITHUB_SECRET)
    verify_signature(bytearray(GITHUB_PAYLOAD.encode()), GITHUB_SIGNATURE.encode(), GITHUB_SECRET.encode())


def test_sign_payload_reproduces_githubs_published_example() -> None:
    assert sign_payload(GITHUB_PAYLOAD, GITHUB_SECRET) == GITHUB_SIGNATURE
    assert sign_payload(GITHUB_PAYLOAD.encode(), GITHUB_SECRET.encode()) == GITHUB_SIGNATURE


def test_str_payload_is_encoded_utf8_before_hashing() -> None:
    text = '{"text":"Mbappé ⚽ — signé"}'
    expected = "sha256=" + hmac.new(SECRET.encode(), text.encode("utf-8"), hashlib.sha256).hexdigest()
    assert sign_payload(text, SECRET) == expected
    verify_signature(text, expected, SECRET)
    verify_signature(text.encode("utf-8"), expected, SECRET)


def test_upper_case_hex_digits_match_because_the_bytes_are_compared() -> None:
    prefix, digest = GITHUB_SIGNATURE.split("=")
    verify_signature(GITHUB_PAYLOAD, f"{prefix}={digest.upper()}", GITHUB_SECRET)


def test_surrounding_http_whitespace_is_ignored() -> None:
    verify_signature(GITHUB_PAYLOAD, f" {GITHUB_SIGNATURE}\t", GITHUB_SECRET)


def test_a_changed_byte_of_the_payload_fails() -> None:
    with pytest.raises(SignatureVerificationError, match="does not match"):
        verify_signature(GITHUB_PAYLOAD + " ", GITHUB_SIGNATURE, GITHUB_SECRET)


def test_a_wrong_secret_fails() -> None:
    with pytest.raises(SignatureVerificationError):
        verify_signature(GITHUB_PAYLOAD, GITHUB_SIGNATURE, "another secret")


def test_rotation_any_of_several_secrets_may_match() -> None:
    signature = sign_payload(BODY, "new-secret")
    verify_signature(BODY, signature, ["old-secret", "new-secret"])
    verify_signature(BODY, signature, ("new-secret", b"old-secret"))
    with pytest.raises(SignatureVerificationError):
        verify_signature(BODY, signature, ["old-secret", "older-secret"])


_VALID_HEX = GITHUB_SIGNATURE[len("sha256="):]
MALFORMED: list[tuple[str, Any]] = [
    ("none", None),
    ("empty", ""),
    ("empty bytes", b""),
    ("prefix only", "sha256="),
    ("no prefix", _VALID_HEX),
    ("sha1 prefix", "sha1=" + _VALID_HEX[:40]),
    ("sha512 prefix", "sha512=" + _VALID_HEX),
    ("upper-case prefix", "SHA256=" + _VALID_HEX),
    ("colon instead of equals", "sha256:" + _VALID_HEX),
    ("63 hex digits", "sha256=" + _VALID_HEX[:-1]),
    ("65 hex digits", "sha256=" + _VALID_HEX + "0"),
    ("odd non-hex letter", "sha256=" + _VALID_HEX[:-1] + "g"),
    ("all non-hex", "sha256=" + "z" * 64),
    ("arabic-indic digits", "sha256=" + "\u0660" * 64),
    ("fullwidth digits", "sha256=" + "\uff10" * 64),
    ("non-ASCII tail", GITHUB_SIGNATURE + "é"),
    ("non-ASCII bytes", b"sha256=" + b"\xff" * 64),
    ("two signatures", GITHUB_SIGNATURE + "," + GITHUB_SIGNATURE),
    ("inner space", "sha256= " + _VALID_HEX),
    ("newline inside", "sha256=" + _VALID_HEX[:32] + "\n" + _VALID_HEX[32:]),
    ("nul byte", GITHUB_SIGNATURE + "\x00"),
    ("int", 12345),
    ("list", [GITHUB_SIGNATURE]),
    ("dict", {"sha256": _VALID_HEX}),
]


@pytest.mark.parametrize("signature", [m[1] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_every_malformed_signature_raises_signature_verification_error(signature: Any) -> None:
    with pytest.raises(SignatureVerificationError):
        verify_signature(GITHUB_PAYLOAD, signature, GITHUB_SECRET)


@pytest.mark.parametrize("secret", ["another secret", ["another", "and another"]])
@pytest.mark.parametrize("names", [None, WebhookHeaders.with_prefix("X-Acme-")])
def test_a_mismatch_names_the_header_and_its_two_usual_causes(secret: Any, names: Any) -> None:
    """The one-secret fast path and the general path say the same thing."""
    header = "X-Service-Signature" if names is None else "X-Acme-Signature"
    with pytest.raises(SignatureVerificationError) as info:
        verify_signature(GITHUB_PAYLOAD, GITHUB_SIGNATURE, secret, header_names=names)
    assert str(info.value).startswith(f"{header} header does not match the payload")
    assert "signing secret" in str(info.value) and "raw bytes" in str(info.value)
    assert "another" not in str(info.value)


@pytest.mark.parametrize("signature", ["sha256=" + "z" * 64, b"\xff", 12345])
def test_a_malformed_signature_names_the_header(signature: Any) -> None:
    names = WebhookHeaders.with_prefix("X-Acme-")
    with pytest.raises(SignatureVerificationError, match="^malformed X-Acme-Signature header"):
        verify_signature(GITHUB_PAYLOAD, signature, GITHUB_SECRET, header_names=names)


def test_missing_signature_says_missing() -> None:
    with pytest.raises(SignatureVerificationError, match="missing X-Service-Signature"):
        verify_signature(BODY, None, SECRET)


@pytest.mark.parametrize("payload", [None, 42, {"event": "breaking_news"}, ["x"], "\ud800"])
def test_a_payload_that_is_not_raw_bytes_raises_signature_verification_error(payload: Any) -> None:
    with pytest.raises(SignatureVerificationError):
        verify_signature(payload, GITHUB_SIGNATURE, GITHUB_SECRET)


def test_a_parsed_dict_payload_names_the_framework_mistake() -> None:
    with pytest.raises(SignatureVerificationError, match="raw request body"):
        verify_signature({"event": "breaking_news"}, GITHUB_SIGNATURE, GITHUB_SECRET)  # type: ignore[arg-type]


@pytest.mark.parametrize("secret", [None, "", b"", [], [""], 42, [42]])
def test_an_unusable_secret_is_a_parameter_error_of_the_caller(secret: Any) -> None:
    with pytest.raises(ParameterError):
        verify_signature(BODY, sign_payload(BODY, SECRET), secret)


def test_sign_payload_takes_exactly_one_secret() -> None:
    with pytest.raises(ParameterError):
        sign_payload(BODY, ["a", "b"])  # type: ignore[arg-type]


def test_errors_never_contain_the_secret() -> None:
    secret = "very-secret-value-123"
    for signature in (None, "sha256=" + "0" * 64, "garbage"):
        with pytest.raises(SignatureVerificationError) as info:
            verify_signature(BODY, signature, secret)
        assert secret not in str(info.value)
        assert secret not in repr(info.value)


@LOADED_MACHINE
@given(
    payload=st.one_of(st.binary(max_size=256), st.text(max_size=256), st.none(), st.integers()),
    signature=st.one_of(
        st.none(),
        st.text(max_size=80),
        st.binary(max_size=80),
        st.text(alphabet="0123456789abcdefABCDEFxyz=\u0660\uff10 ", max_size=72).map(lambda s: "sha256=" + s),
        st.integers(),
    ),
)
def test_fuzzed_inputs_only_ever_raise_signature_verification_error(payload: Any, signature: Any) -> None:
    try:
        verify_signature(payload, signature, SECRET)
    except SignatureVerificationError:
        pass


@LOADED_MACHINE
@given(payload=st.binary(max_size=512), secret=st.text(max_size=40).map("whsec_prop_".__add__))
def test_sign_then_verify_round_trips_for_any_body_and_secret(payload: bytes, secret: str) -> None:
    signature = sign_payload(payload, secret)
    verify_signature(payload, signature, secret)
    with pytest.raises(SignatureVerificationError):
        verify_signature(payload + b"x", signature, secret)


@LOADED_MACHINE
@given(
    payload=st.binary(max_size=4096),
    # A distinctive prefix: the suite's secret watch must not take "00000000" for a leak.
    secret=st.one_of(st.text(max_size=200).map("whsec_prop_".__add__),
                     st.binary(max_size=200).map(b"whsec_prop_".__add__)),
)
def test_the_cached_hmac_states_give_the_standard_library_hmac(payload: bytes, secret: Any) -> None:
    # Keys shorter than, equal to and longer than SHA-256's 64-byte block (hashed first).
    key = secret.encode("utf-8", "surrogatepass") if isinstance(secret, str) else secret
    expected = "sha256=" + hmac.new(key, payload, hashlib.sha256).hexdigest()
    assert sign_payload(payload, secret) == expected
    verify_signature(payload, expected, secret)  # the fast path (str) and the general one (bytes)
    verify_signature(payload, expected, [b"other", secret])


def test_a_64_byte_and_a_65_byte_key_take_their_rfc_2104_branches() -> None:
    for key in (b"k" * 64, b"k" * 65, "\u00e9" * 33):  # the last one is 66 bytes once encoded
        raw = key.encode() if isinstance(key, str) else key
        assert sign_payload(BODY, key) == "sha256=" + hmac.new(raw, BODY, hashlib.sha256).hexdigest()


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([(b"x-service-signature", b"a"), (b"x-other", b"b")], ["a", None]),  # ASGI: dict lookups
        ([(b"x-service-signature", b"a"), (b"X-Service-Signature", b"b")], [None, None]),  # ambiguous
        ([(b"x-service-signature", b"a"), (b"x-service-signature", b"a")], ["a", None]),  # repeated, same
        ([(b"x-service-signature", b"a"), (b"x-service-signature", b"b")], [None, None]),
        ([(b"X-SERVICE-DELIVERY", b"d"), (b"x-service-signature", b"a")], ["a", "d"]),
        ([(b"x-service-signature", 7), (b"x-service-delivery", b"\xe9")], [None, "\xe9"]),
        ([(b"x-service-signature",)], [None, None]),
    ],
)
def test_get_headers_fast_path_keeps_the_rules_of_get_header(headers: Any, expected: list[Any]) -> None:
    from sports_posts.webhooks.signature import get_header, get_headers

    names = ("X-Service-Signature", "X-Service-Delivery")
    assert get_headers(headers, names) == expected
    assert [get_header(headers, name) for name in names] == expected


def test_the_hmac_is_the_standard_librarys_keyed_once_per_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    # No hand-written HMAC: the keyed object comes from hmac.new, made once and copied per call.
    from sports_posts.webhooks import signature

    made: list[bytes] = []
    original = hmac.new

    def new(key: bytes, msg: Any = None, digestmod: Any = None) -> Any:
        made.append(key)
        return original(key, msg, digestmod)

    monkeypatch.setattr(hmac, "new", new)
    signature._hmac_for.cache_clear()
    secret = "whsec_test_keyed_once"
    for body in (b"one", b"two", b"three"):
        expected = "sha256=" + original(secret.encode(), body, hashlib.sha256).hexdigest()
        verify_signature(body, expected, secret)
    assert made == [secret.encode()]
