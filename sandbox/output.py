"""Keep a command's output bounded while it streams: its head, its tail, and a count of the rest."""

from __future__ import annotations

from typing import Final

# UTF-8 continuation bytes; counting the others counts characters without decoding.
_CONTINUATION: Final = bytes(range(0x80, 0xC0))
# A character is at most four bytes, so this many bytes always hold `limit` characters.
_BYTES_PER_CHAR: Final = 4


def cut_marker(count: int) -> str:
    return f"\n[... {count} characters cut ...]\n"


class OutputBuffer:
    """Collects streamed bytes in memory proportional to the limit, whatever the output's size."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._cap = limit * _BYTES_PER_CHAR
        self._head = bytearray()
        self._tail = bytearray()
        self._chars = 0

    def feed(self, chunk: bytes) -> None:
        self._chars += len(chunk.translate(None, delete=_CONTINUATION))
        room = self._cap - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self._tail += chunk
            del self._tail[: max(0, len(self._tail) - self._cap)]

    def text(self) -> str:
        """The output, or its head and tail around a marker saying how much was cut."""
        head = self._head.decode(errors="replace")
        if not self._tail:
            return truncate(head, self._limit)
        tail = self._tail.decode(errors="replace")
        keep_head = self._limit // 2
        keep_tail = self._limit - keep_head
        cut = max(0, self._chars - keep_head - keep_tail)
        return head[:keep_head] + cut_marker(cut) + tail[-keep_tail:]


def truncate(text: str, limit: int) -> str:
    """`text` itself when it fits, else its head and tail around a cut marker."""
    if len(text) <= limit:
        return text
    keep_head = limit // 2
    keep_tail = limit - keep_head
    return text[:keep_head] + cut_marker(len(text) - limit) + text[-keep_tail:]
