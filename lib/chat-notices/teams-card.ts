import { utcWords } from "../words";
import { headline, stillOpen, type ChatNotice } from "./notice";

/**
 * Teams renders a subset of Markdown in a card's text and facts: in a name or an email written into a notice the
 * characters that make emphasis or a link (`[text](url)` needs the brackets) are escaped, so it shows as written.
 */
export const teamsEscape = (text: string) => text.replace(/[\\`*_[\]~]/g, (character) => `\\${character}`);

/**
 * The notice as an Adaptive Card (1.4), in the message a Teams workflow webhook accepts. A workflow cannot change a
 * card it posted, so each later change of the call is a new card (`followUp`) that names the request and who decided.
 * While the call waits, the card opens its card on the desk; nothing in it decides anything.
 */
export function teamsMessage(notice: ChatNotice, followUp: boolean) {
  const open = stillOpen(notice);
  const facts = [
    { title: "Agent", value: teamsEscape(notice.agent) },
    { title: "Customer", value: teamsEscape(notice.customer) },
    { title: "Amount", value: teamsEscape(notice.amount) },
    open
      ? { title: "Decide before", value: utcWords(notice.expiresAt) }
      : { title: "Closed", value: utcWords(notice.state.at) },
  ];
  const body: Record<string, unknown>[] = [
    {
      type: "TextBlock",
      text: teamsEscape(`${followUp ? "Update: " : ""}${headline(notice)}`),
      weight: "Bolder",
      size: "Medium",
      wrap: true,
    },
    { type: "FactSet", facts },
  ];
  if (notice.reasons.length > 0)
    body.push({
      type: "TextBlock",
      text: teamsEscape(`Held because: ${notice.reasons.join("; ")}`),
      wrap: true,
    });
  body.push({ type: "TextBlock", text: teamsEscape(`Request ${notice.approvalId}`), isSubtle: true, wrap: true });
  return {
    type: "message",
    attachments: [
      {
        contentType: "application/vnd.microsoft.card.adaptive",
        contentUrl: null,
        content: {
          $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
          type: "AdaptiveCard",
          version: "1.4",
          body,
          actions: open ? [{ type: "Action.OpenUrl", title: "Open on the desk", url: notice.deskUrl }] : [],
        },
      },
    ],
  };
}
