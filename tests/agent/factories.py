"""Build trajectories by hand for the pure tests."""

from __future__ import annotations

import json
from typing import Any

from resolver.agent.events import Event, Kind


class Log:
    """An event log under construction, numbered like the real one."""

    def __init__(self, system: str = "sys", message: str = "do it") -> None:
        self.events: list[Event] = []
        self.step = 0
        self.add(Kind.TASK, system=system, message=message)

    def add(self, kind: str, **payload: Any) -> Event:
        event = Event(len(self.events) + 1, kind, payload)
        self.events.append(event)
        return event

    def call(
        self,
        tool: str,
        args: dict[str, Any] | str,
        result: str = "ok",
        error: bool = False,
        cost: float | None = 0.01,
    ) -> None:
        self.step += 1
        raw = args if isinstance(args, str) else json.dumps(args)
        usage = {"prompt_tokens": 100, "completion_tokens": 10, "cost_usd": cost}
        call_id = f"c{self.step}"
        self.add(
            Kind.ACTION, step=self.step, call_id=call_id, tool=tool, arguments=raw, usage=usage
        )
        self.add(
            Kind.OBSERVATION,
            step=self.step,
            call_id=call_id,
            tool=tool,
            content=result,
            error=error,
        )

    def bash(self, command: str, result: str = "ok", error: bool = False) -> None:
        self.call("execute_bash", {"command": command}, result, error)

    def say(self, content: str) -> None:
        self.step += 1
        usage = {"prompt_tokens": 100, "completion_tokens": 10, "cost_usd": 0.01}
        self.add(Kind.MESSAGE, step=self.step, content=content, usage=usage)
