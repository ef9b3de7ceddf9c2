import type { QueuedMessage } from "../../db/outbox";

// The email a delegation of the refund permission sends, like a new key's: to the person whose permission it is
// and to the tenant's admins, so a connection made from a stolen session does not go unnoticed.

export function delegationMail(
  recipients: string[],
  facts: { agent: { name: string; email: string }; client: { id: string; name: string }; grantId: string },
): QueuedMessage[] {
  const { agent, client, grantId } = facts;
  const body = [
    `${agent.name} (${agent.email}) let the client "${client.name}" propose refunds as them.`,
    ``,
    `Client: ${client.id}`,
    `Connection: ${grantId}`,
    ``,
    `Refunds above the limit still wait for a supervisor. If this was not expected, revoke the connection now:`,
    `the person under Settings → Connected clients, an admin under Policy and keys.`,
  ].join("\n");
  return recipients.map((recipient) => ({
    kind: "oauth_refunds_delegated",
    recipient,
    subject: `${client.name} may now propose refunds as ${agent.name}`,
    body,
  }));
}
