// The peer of bench/ingress: on a new issue comment that mentions the bot, record a job in
// memory (our server records one in its database and publishes it); ignore every other event.
// It never calls GitHub: nothing here touches context.octokit.

const BOT = process.env.BOT_NAME || "resolver";
// resolver/mentions.py's rule: `@bot` or `@bot[bot]` as a whole word, any case.
const escaped = BOT.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const MENTION = new RegExp(`(?<![\\w@./+-])@${escaped}(?:\\[bot\\])?(?![\\w-])`, "i");

const jobs = [];

/** @param {import("probot").Probot} app */
export default (app) => {
  app.on("issue_comment.created", async (context) => {
    const { comment, issue, repository, sender } = context.payload;
    const found = MENTION.exec(comment.body || "");
    if (found === null) return;
    jobs.push({
      delivery: context.id,
      repo: repository.full_name,
      number: issue.number,
      sender: sender.id,
      task: comment.body.slice(found.index + found[0].length).trim(),
    });
  });
};
