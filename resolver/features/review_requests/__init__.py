"""Reviews on request: `@bot review` on a pull request (or a repository's auto-review) runs the
agent on its head with a `comment` tool, and posts one review; it never pushes."""
