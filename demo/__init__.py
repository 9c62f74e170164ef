"""`make demo`: one mention, end to end, on this machine. Stand-ins are labelled as such."""
