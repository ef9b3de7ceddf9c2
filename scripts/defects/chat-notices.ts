import type { Defect } from "./defect";

/** The seeded defects of lib/chat-notices/. */
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
];
