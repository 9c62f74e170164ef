"""What Resolver and its integrations agree on: inbound events, outbound protocols, errors. Pure."""
