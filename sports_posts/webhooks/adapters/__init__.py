"""Thin framework adapters: each reads the raw body, calls the receiver, writes its answer.

None of them lets the framework parse the JSON first: the signature covers the exact
bytes, and a re-serialised body never verifies.
"""
