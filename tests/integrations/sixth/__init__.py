"""A sixth provider, installed from a test package: its folder (`provider/`) is what a new
provider adds under `integrations/`, and the tests install it the way its one line in
`integrations/registry.py` would."""
