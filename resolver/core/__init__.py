"""The kernel: settings, states, logs, redaction and a job's run values. Pure."""
