"""Which LLM model a job uses: the operator's default, a repository's `model:`, or a request's
inline `model=NAME`, always from the operator's allowed list. Pure."""

from __future__ import annotations

import re
from typing import Final

# `model=NAME` as a word of its own; a LiteLLM model string is `provider/name`, with dots,
# dashes, colons and `@` in versioned names.
_NAME: Final = r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}"
_OPTION: Final = re.compile(rf"(?<!\S)model=`?({_NAME})`?(?!\S)")


class ModelNotAllowedError(Exception):
    """A repository or a request asked for a model outside the operator's allowed list."""


def parse_model_option(text: str) -> tuple[str, str | None]:
    """The request without its first `model=NAME`, and that name (None when there is none)."""
    found = _OPTION.search(text)
    if found is None:
        return text, None
    rest = text[: found.start()] + text[found.end() :]
    return re.sub(r"[ \t]{2,}", " ", rest).strip(), found.group(1)


def allowed_models(default: str | None, others: str | None) -> tuple[str, ...]:
    """The default model first, then the operator's others (`RESOLVER_LLM_MODELS`)."""
    names = [default or "", *(others or "").split(",")]
    return tuple(dict.fromkeys(name.strip() for name in names if name.strip()))


def choose_model(
    requested: str | None, configured: object, default: str, allowed: tuple[str, ...]
) -> str:
    """The request's model, else the repository's, else the default; ModelNotAllowedError when
    the one picked is not in `allowed`."""
    if configured is not None and not (
        isinstance(configured, str) and re.fullmatch(_NAME, configured)
    ):
        # Not echoed: the file's text is not ours to post.
        raise ModelNotAllowedError("`model:` in .resolver/config.yml is not a model name.")
    for where, name in (("request", requested), (".resolver/config.yml", configured)):
        if name:
            if name not in allowed:
                raise ModelNotAllowedError(refusal(name, where, allowed))
            return name
    return default


def refusal(name: str, where: str, allowed: tuple[str, ...]) -> str:
    """Why `name` cannot be used, with the list to pick from."""
    listed = ", ".join(f"`{model}`" for model in allowed)
    return (
        f"The model `{name}` (from the {where}) is not one this service may use. "
        f"Pick one of: {listed}."
    )
