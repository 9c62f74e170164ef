"""Fix attempts per head commit: claimed in one statement, never more than the bound, even
when workers claim at once (both databases)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from resolver.store import ci_attempts
from resolver.store.db import session_scope


def claim(sha: str, most: int) -> int | None:
    with session_scope() as session:
        return ci_attempts.claim_attempt(session, "github", "o/r", sha, most)


def test_attempts_count_up_to_the_bound_per_head_commit(resolver_env, backend) -> None:
    assert [claim("a" * 40, 2) for _ in range(3)] == [1, 2, None]
    assert claim("b" * 40, 2) == 1  # another commit has its own count
    with session_scope() as session:
        assert ci_attempts.attempts_on(session, "github", "o/r", "a" * 40) == 2


def test_concurrent_claims_never_pass_the_bound(resolver_env, backend) -> None:
    with ThreadPoolExecutor(8) as pool:
        taken = list(pool.map(lambda _: claim("c" * 40, 3), range(8)))
    assert sorted(n for n in taken if n is not None) == [1, 2, 3]
    assert taken.count(None) == 5
