"""Review batches: a pull request's review threads answered by one job, each thread replied to."""
