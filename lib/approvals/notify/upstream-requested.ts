import type { Db } from "../../db";
import { queueMessages } from "../../db/outbox";
import type { UpstreamPreview } from "../../upstream/calls/preview";
import { shorten } from "../../words";
import { requestedMessages } from "./messages";
import { findRequestAudience } from "./sql";

/** How much of one argument a mail shows; the card on the desk shows it in full. */
const ARGUMENT_CHARS = 200;

/**
 * A key or value as one line of the mail: JSON text (quotes, `\n` escaped) with the line separators JSON leaves
 * as they are escaped too, so an agent's argument cannot write lines of its own ("Held because: …") into the mail.
 */
const oneLine = (value: unknown) =>
  shorten(
    JSON.stringify(value).replace(
      /[\u0085\u2028\u2029]/g,
      (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`,
    ),
    ARGUMENT_CHARS,
  );

/**
 * Tells the tenant's supervisors that an upstream tool's call waits, through the outbox in the transaction that
 * opened the request: an email to each (pointing to the desk, where the card shows the call in full) and the
 * tenant's webhook when one is set. Built from the host's preview, never from anything the model wrote beside the
 * checked arguments.
 */
export async function notifyUpstreamRequested(
  client: Db,
  approval: { id: string; tenantId: string; expiresAt: Date; preview: UpstreamPreview },
): Promise<void> {
  const { preview } = approval;
  const tenant = await findRequestAudience(client, approval.tenantId, preview.customer_id);
  if (!tenant) throw new Error(`tenant ${approval.tenantId} vanished during a call`);
  const subject = `Approval needed: ${preview.tool} on ${preview.server}`;
  const body = [
    `An agent's call to ${preview.upstream_tool} on the MCP server ${preview.server} waits for your approval${tenant.customerEmail ? ` (for ${tenant.customerEmail})` : ""}.`,
    ``,
    ...preview.held.map((reason) => `Held because: ${reason.reason}`),
    ...Object.entries(preview.arguments).map(([key, value]) => `${oneLine(key)}: ${oneLine(value)}`),
    `Decide before: ${approval.expiresAt.toISOString()}`,
    `Request: ${approval.id}`,
    ``,
    `Open toolgate under Approvals: the card shows every argument in full.`,
  ].join("\n");
  const messages = requestedMessages(
    tenant,
    approval,
    { subject, bodyFor: () => body },
    { tool: preview.tool, server: preview.server, definition_hash: preview.definition_hash },
  );
  await queueMessages(client, { tenantId: approval.tenantId, orderId: null, toolCallId: null }, messages);
}
