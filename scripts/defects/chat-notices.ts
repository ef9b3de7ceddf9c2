import type { Defect } from "./defect";

/** The seeded defects of lib/chat-notices/, and of the outbox sender's answer to their rate limits. */
export const defects: Defect[] = [
  {
    name: "chat: the update changes the stored message",
    file: "lib/chat-notices/send.ts",
    find: "slackClient(slack.secret).chat.update({ channel, ts, ...slackMessage(notice) })",
    replace: "slackClient(slack.secret).chat.postMessage({ channel, ...slackMessage(notice) })",
    testFile: "tests/chat-notices/chat-notices.integration.test.ts",
    test: "a held refund posts one Slack message and one Teams card with the desk link; deciding it updates that same message",
  },
  {
    name: "chat: an update waits for its message",
    file: "lib/chat-notices/send.ts",
    find: "if (!message?.channel || !message.ts) {\n",
    replace: "if (!message?.channel || !message.ts) {\n    return;\n",
    testFile: "tests/chat-notices/chat-notices.integration.test.ts",
    test: "a Slack outage leaves the outbox retrying and the approval unaffected; back up, the message is posted, then updated",
  },
  {
    name: "chat: names escaped for Slack",
    file: "lib/chat-notices/slack-message.ts",
    find: 'text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")',
    replace: "text",
    testFile: "tests/chat-notices/chat-notices.integration.test.ts",
    test: "a name with Slack or Markdown markup shows as written: it pings nobody and links nothing",
  },
  {
    name: "chat: a retried post looks for its message",
    file: "lib/chat-notices/send.ts",
    find: "postToSlack(row.tenantId, notice, row.attempts > 1)",
    replace: "postToSlack(row.tenantId, notice, false)",
    testFile: "tests/chat-notices/chat-notices.integration.test.ts",
    test: "a post Slack took but whose answer was lost (cut) is found on the retry: one message, stored, then updated",
  },
  {
    name: "chat: a first post reads no history",
    file: "lib/chat-notices/send.ts",
    find: "postToSlack(row.tenantId, notice, row.attempts > 1)",
    replace: "postToSlack(row.tenantId, notice, true)",
    testFile: "tests/chat-notices/chat-notices.integration.test.ts",
    test: "a first post carries the request's id in its metadata and reads no history",
  },
  {
    name: "chat: no history scope, still posted",
    file: "lib/chat-notices/send.ts",
    find: "!HISTORY_REFUSALS.includes(error.data.error)",
    replace: "true",
    testFile: "tests/chat-notices/chat-notices.integration.test.ts",
    test: "a retry whose bot may not read the channel (missing_scope) posts anyway and says so once in the log",
  },
  {
    name: "chat: a retry takes another app's message for its own",
    file: "lib/chat-notices/send.ts",
    find: "message.bot_id === ownBot &&",
    replace: "",
    testFile: "tests/chat-notices/chat-notices.integration.test.ts",
    test: "a retry takes no other app's message for its own: one carrying the request's metadata is passed over, and the notice is posted",
  },
  {
    name: "chat: a counted 429 still waits its Retry-After",
    file: "lib/mail/delivery.ts",
    find: "Math.max(backoff, error.seconds)",
    replace: "backoff",
    testFile: "tests/chat-notices/chat-notices.integration.test.ts",
    test: "a receiver that has answered only 429 for a day from the first try spends the notice's attempts, each waiting at least its Retry-After, and dead-letters it",
  },
];
