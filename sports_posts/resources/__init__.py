"""Typed methods grouped by resource; each body hands an endpoint call to the client."""
