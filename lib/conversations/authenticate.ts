import { bearerOf, type AuthenticatedAgent } from "../auth/keys/api-keys";
import { db } from "../db";
import type { RateCount } from "../gateway";
import { isWellFormedId } from "../security/input";
import { isUpstreamName } from "../upstream/calls/exposure";
import { toFound, type FoundConversation } from "./lookup";
import { findKeyAndConversation } from "./sql";

/**
 * The bearer key's agent and, in the same statement, that agent's conversation with its policy: the one lookup
 * every conversation route of the agent API makes. A null id names the conversation an OAuth connection works on
 * (its person's choice, issue 40). Null for a key that does not authenticate (see
 * `authenticateApiKey`); `found` is null when the conversation is missing or another agent's. With
 * `countCall`, the same statement also counts one call of this key in this conversation for the rate stage
 * (`rateCounted`, for `proposeCall`), only when both were found. With `orderHint` (`orderHintOf` the body), the same
 * statement reads that order for the call (`found.hintedOrder`, for `proposeCall`).
 */
export async function authenticateForConversation(
  authorization: string | null,
  conversationId: string | null,
  options: { countCall?: boolean; tokenIssuer?: string; orderHint?: string | null } = {},
): Promise<{ agent: AuthenticatedAgent; found: FoundConversation | null; rateCounted?: RateCount[] } | null> {
  const bearer = await bearerOf(authorization, options.tokenIssuer ?? null);
  if (bearer === null) return null;
  // A malformed id names no conversation; the key is still checked, so the answer is 404, never a database error.
  if (conversationId !== null && !isWellFormedId(conversationId)) conversationId = "";
  // Every conversation column is null when the conversation is not this agent's.
  const row = await findKeyAndConversation(db, bearer.credential, conversationId, options);
  if (!row) return null;
  const { apiKeyId, userId, keyTenantId, rateCounted, hintedOrder, ...conversation } = row;
  const agent: AuthenticatedAgent = {
    apiKeyId,
    userId,
    tenantId: keyTenantId,
    ...(bearer.connection ? { connection: bearer.connection } : {}),
  };
  if (conversation.id === null) return { agent, found: null };
  const found = toFound(conversation);
  if (options.orderHint) found.hintedOrder = { orderId: options.orderHint, facts: hintedOrder };
  // A connection holds at most the scopes its grant named: it narrows the conversation's, never widens them. An
  // upstream server's tool has no scope of its own and may write anywhere, so a connection granted less than the
  // conversation holds (a read-only one, say) is not offered those tools at all.
  if (bearer.connection) {
    const granted = bearer.connection.scopes;
    const withheld = found.conversation.scopes.filter((scope) => !granted.includes(scope));
    agent.connection = { ...bearer.connection, withheld };
    found.conversation.scopes = found.conversation.scopes.filter((scope) => granted.includes(scope));
    if (withheld.length > 0)
      found.conversation.tools = found.conversation.tools.filter((name) => !isUpstreamName(name));
  }
  return { agent, found, ...(rateCounted ? { rateCounted } : {}) };
}
