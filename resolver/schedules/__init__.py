"""Scheduled repository maintenance: recurring agent runs on a repository's default branch.

- `cron`: when a schedule is due (pure);
- `spec`, `prompts`, `limits`, `decide`: what a schedule says, asks, may do (pure);
- `store`, `queue`: schedules and their runs in the database; limits decide when runs start;
  `store.in_transaction` is the one place the stage opens a transaction;
- `sync`: `.resolver/schedules.yml` from the default branch;
- `beat`: the Celery tasks (the tick, the file sync); `runner`: the worker's runner.
"""
