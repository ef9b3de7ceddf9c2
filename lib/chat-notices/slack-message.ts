import type { ChatPostMessageArguments } from "@slack/web-api";
import { shorten, utcWords } from "../words";
import { headline, stillOpen, type ChatNotice } from "./notice";

type SlackBlock = Extract<ChatPostMessageArguments, { blocks: unknown }>["blocks"][number];

/**
 * Slack reads `<...>` in mrkdwn as a link or a mention (`<!channel>`) and `&` as an entity: a name or an email
 * written into a notice is escaped, so it shows as written and pings or links nobody.
 */
export const slackEscape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * The message as Block Kit: what is asked (or what became of it and who decided), the agent, the customer, the
 * amount and why it was held; while the call still waits, a link button to its card on the desk. The button opens
 * a page behind sign-in; nothing in the message decides anything, so Slack sends toolgate no requests.
 */
export function slackMessage(notice: ChatNotice): { text: string; blocks: SlackBlock[] } {
  const open = stillOpen(notice);
  const fields = [
    `*Agent*\n${slackEscape(notice.agent)}`,
    `*Customer*\n${slackEscape(notice.customer)}`,
    `*Amount*\n${slackEscape(notice.amount)}`,
    open ? `*Decide before*\n${utcWords(notice.expiresAt)}` : `*Closed*\n${utcWords(notice.state.at)}`,
  ].map((text) => ({ type: "mrkdwn" as const, text: shorten(text, 2000) }));
  const blocks: SlackBlock[] = [
    { type: "header", text: { type: "plain_text", text: shorten(headline(notice), 150) } },
    { type: "section", fields },
  ];
  if (notice.reasons.length > 0)
    blocks.push({
      type: "section",
      text: {
        type: "mrkdwn",
        text: shorten(`*Held because*\n${notice.reasons.map((reason) => `• ${slackEscape(reason)}`).join("\n")}`, 3000),
      },
    });
  blocks.push({
    type: "context",
    elements: [{ type: "mrkdwn", text: `Request ${slackEscape(notice.approvalId)}` }],
  });
  if (open)
    blocks.push({
      type: "actions",
      elements: [
        {
          type: "button",
          action_id: "open_desk",
          text: { type: "plain_text", text: "Open on the desk" },
          url: notice.deskUrl,
          style: "primary",
        },
      ],
    });
  return { text: slackEscape(headline(notice)), blocks };
}
