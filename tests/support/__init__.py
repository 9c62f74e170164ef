"""Fakes shared by the test packages: servers that speak a provider's protocol on loopback."""
