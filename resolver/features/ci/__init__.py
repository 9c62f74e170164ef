"""CI fixes: a red check on the bot's own pull request starts a fix job, within limits."""
