"""The one error of reading settings."""


class ConfigError(Exception):
    """A setting is missing or invalid; the message is one line that says how to fix it.
    `variable` names it (`RESOLVER_…`) and `problem` says what is wrong, without the hint."""

    def __init__(self, message: str, variable: str = "", problem: str = "") -> None:
        super().__init__(message)
        self.variable, self.problem = variable, problem
