"""Merge conflicts: `@bot rebase`, and `conflicts: fix` on a push to the default branch."""
