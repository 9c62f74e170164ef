"""The agent: an event-sourced loop of LLM tool calls run in a sandbox.

`controller.run_agent` runs the loop on an open sandbox; `session.run_session` adds the clone,
setup and diff around it (the worker's and `resolver run`'s path).

This file imports nothing: importing any `resolver.agent.X` runs it, so a re-export here would
load the controller, litellm and docker into every process that reads one pure module (`git`,
`events`), the web process included. Callers name the module they need.
"""
