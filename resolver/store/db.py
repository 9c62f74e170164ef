"""Engine and sessions. The only place that knows how to connect."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

_database_url: Callable[[], str] | None = None


def use_database(url: Callable[[], str]) -> None:
    """Say where this process's database is: each composition root (the HTTP app, the Celery
    tasks, the command line) hands over a reading of its settings' URL. It is read when a
    session or the engine is asked for, never at import: a process may import the store long
    before it runs (forked from a warm parent), and a command whose settings do not load still
    starts (`resolver keys generate`) and says what is wrong when it does need them."""
    global _database_url
    _database_url = url


def database_url() -> str:
    """The database's URL, as the composition root said (`use_database`)."""
    if _database_url is None:
        raise RuntimeError("no database: the process's composition root calls use_database")
    return _database_url()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets the web process read while a worker writes; busy_timeout waits out short locks.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=15000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def make_engine(url: str) -> Engine:
    """An engine for `url`; SQLite files get their directory and sane pragmas."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # One connection per thread of a threads-pool worker, and its heartbeats.
        engine = create_engine(
            url, connect_args={"timeout": 15}, pool_size=20, max_overflow=60, pool_timeout=60
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=50, pool_timeout=60)


@lru_cache(maxsize=4)
def engine_for(url: str) -> Engine:
    engine = make_engine(url)
    _ENGINES.add(engine)
    return engine


_ENGINES: Final[weakref.WeakSet[Engine]] = weakref.WeakSet()
"""This process's engines (`engine_for`), whose pools a forked child drops; weakly, so that an
engine the cache lets go of (and its connections) is not kept alive here."""


def _forked() -> None:
    """In a forked child (a prefork worker's task process): the parent's pooled connections
    are the parent's. Two processes on one socket corrupt each other's conversation with the
    server (PostgreSQL: "server closed the connection unexpectedly" at a child's first
    statement), so the child starts with empty pools and leaves the parent's open."""
    for engine in list(_ENGINES):
        engine.dispose(close=False)


os.register_at_fork(after_in_child=_forked)


def get_engine() -> Engine:
    return engine_for(database_url())


_KEPT = threading.local()


@contextmanager
def kept_transaction() -> Iterator[Connection]:
    """A transaction on a connection this thread keeps between calls (the ingress's writer
    thread), replaced once it is invalidated (the database dropped it: the caller may try
    again). Checking one out of the pool each time cost PostgreSQL a ping, and either database
    a reset, on every batch of mentions.

    On SQLite the kept connection never checkpoints the write-ahead log itself: a thread of the
    process does it in the background after its commits (`Checkpointer`)."""
    engine = get_engine()
    kept: tuple[int, Connection | None] = getattr(_KEPT, "kept", (0, None))
    pid, conn = kept
    if pid != os.getpid():  # a forked child: the parent's connection is the parent's to use
        conn = None
    if conn is None or conn.invalidated or conn.closed or conn.engine is not engine:
        if conn is not None:
            conn.close()
        conn = engine.connect()
        if engine.dialect.name == "sqlite":
            conn.exec_driver_sql("PRAGMA wal_autocheckpoint=0")
            conn.commit()
        _KEPT.kept = (os.getpid(), conn)
    with conn.begin():
        yield conn
    if engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):
        _CHECKPOINTER.committed(engine.url.database)


CHECKPOINT_EVERY: Final = 0.5
"""The most often, in seconds, that a kept connection's commits are checkpointed."""


class Checkpointer:
    """Copies the write-ahead log of a SQLite file into the file, in a thread of its own, after
    a kept connection commits to it (at most every CHECKPOINT_EVERY seconds).

    Left to SQLite, the commit that takes the log past 1,000 pages runs the checkpoint itself,
    with its two fsyncs: measured on this machine, 1 to 10 ms added to one mention's answer in a
    few hundred, and to the answers queued behind it. A passive checkpoint blocks no writer and
    waits for no reader, and the driver lets go of the GIL while it runs. Should this thread fall
    behind, any other connection's commit past the threshold still checkpoints, as SQLite does."""

    def __init__(self) -> None:
        self.forked()

    def forked(self) -> None:
        """Start afresh: in a forked child the parent's thread, and its lock, stay behind."""
        self._lock = threading.Lock()
        self._paths: set[str] = set()
        self._due = threading.Event()
        self._thread: threading.Thread | None = None

    def committed(self, path: str) -> None:
        """Say that a commit to `path` awaits its checkpoint."""
        with self._lock:
            self._paths.add(path)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="resolver-checkpoint", daemon=True
                )
                self._thread.start()
        self._due.set()

    def _run(self) -> None:
        while True:
            self._due.wait()
            self._due.clear()
            with self._lock:
                paths, self._paths = self._paths, set()
            for path in paths:
                checkpoint(path)
            time.sleep(CHECKPOINT_EVERY)  # the commits meanwhile wait for the next round


def checkpoint(path: str) -> None:
    """A passive checkpoint of the SQLite file at `path`; a busy file is left for the next one,
    and a vanished one is not made again."""
    try:
        uri = f"{Path(path).absolute().as_uri()}?mode=rw"
        connection = sqlite3.connect(uri, uri=True, timeout=15, isolation_level=None)
    except sqlite3.Error:
        return
    try:
        connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    except sqlite3.Error:
        pass
    finally:
        connection.close()


_CHECKPOINTER: Final = Checkpointer()
os.register_at_fork(after_in_child=_CHECKPOINTER.forked)


@lru_cache(maxsize=4)
def _factory(url: str) -> sessionmaker[Session]:
    return sessionmaker(bind=engine_for(url), expire_on_commit=False)


@contextmanager
def session_scope() -> Iterator[Session]:
    """A session that commits on success and rolls back on error."""
    session = _factory(database_url())()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def end_step(session: Session) -> None:
    """Commit what `session` did so far and let go of its rows and its connection, as leaving a
    `session_scope()` does: the next statement begins a new transaction. For a stage entry's
    helpers that must commit between steps (before a post that a later try looks for, before
    publishing what was recorded, before waiting on the network)."""
    session.commit()
    session.close()


def like_escaped(text: str) -> str:
    """`text` for a LIKE pattern with `escape="\\"`: its own %, _ and \\ match themselves."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


StoreError = SQLAlchemyError
"""Any failure of the database or of a statement."""
StoreUnavailable = OperationalError
"""The database cannot be reached, or is locked or out of space: a failure worth a retry."""


def ping() -> None:
    """Raise StoreError unless the database answers."""
    with get_engine().connect() as conn:
        conn.execute(text("SELECT 1"))
