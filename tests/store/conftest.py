import os
from collections.abc import Iterator

import pytest

from resolver.store.db import engine_for
from tests.conftest import _drop_postgres_database, _postgres_database


@pytest.fixture
def empty_database(resolver_env, backend) -> Iterator[str]:
    """A second, empty database of the test's kind: a new deployment, or an old release's."""
    if backend == "sqlite":
        yield f"sqlite:///{resolver_env.tmp / 'new' / 'resolver.db'}"
        return
    admin = os.environ["RESOLVER_TEST_POSTGRES_URL"]
    url, name = _postgres_database(admin)
    yield url
    engine_for(url).dispose()
    _drop_postgres_database(admin, name)
