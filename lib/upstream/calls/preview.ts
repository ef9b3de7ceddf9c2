import type { Db } from "../../db";
import type { PinnedDefinition } from "../servers/definition";

/**
 * What a supervisor's card shows for a held upstream call, built by the runtime from the reviewed definition and the
 * checked arguments, never by the model: the card titles each argument from `input_schema`, and `annotations` is
 * the server's own claim, not something toolgate checked.
 */
export interface UpstreamPreview {
  kind: "upstream";
  tool: string;
  server: string;
  upstream_tool: string;
  definition_hash: string;
  title: string | null;
  description: string | null;
  input_schema: Record<string, unknown>;
  annotations_claimed: Record<string, unknown> | null;
  arguments: Record<string, unknown>;
  conversation_id: string;
  customer_id: string;
  held: { rule: "upstream_tool"; reason: string }[];
}

export function upstreamPreview(call: {
  tool: string;
  server: string;
  definition: PinnedDefinition;
  hash: string;
  args: Record<string, unknown>;
  conversation: { id: string; customerId: string };
  reason: string;
}): UpstreamPreview {
  return {
    kind: "upstream",
    tool: call.tool,
    server: call.server,
    upstream_tool: call.definition.name,
    definition_hash: call.hash,
    title: call.definition.title,
    description: call.definition.description,
    input_schema: call.definition.inputSchema,
    annotations_claimed: call.definition.annotations,
    arguments: call.args,
    conversation_id: call.conversation.id,
    customer_id: call.conversation.customerId,
    held: [{ rule: "upstream_tool", reason: call.reason }],
  };
}

export const isUpstreamPreview = (preview: unknown): preview is UpstreamPreview =>
  typeof preview === "object" && preview !== null && (preview as { kind?: unknown }).kind === "upstream";

/** Tells people a held upstream call waits, in the transaction that opened its request (the approvals feature's). */
export type UpstreamNotifier = (
  client: Db,
  approval: { id: string; tenantId: string; expiresAt: Date; preview: UpstreamPreview },
) => Promise<void>;
