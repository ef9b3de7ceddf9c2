import { z } from "zod";
import { db } from "../db";
import { newId } from "../ids";
import { IdSchema } from "../security/input";
import { findTool, TOOL_NAMES } from "../tools/registry";
import { exposableTools, isUpstreamName } from "../upstream/calls/exposure";
import { scopesFor } from "../tools/scopes";
import {
  customerExists,
  customerOrderExists,
  findAgentPermissions,
  insertConversation,
  type NewConversation,
} from "./sql";

export const OpenConversationSchema = z.strictObject({
  customer_id: IdSchema,
  order_id: IdSchema.optional(),
  tools: z.array(z.string().min(1).max(100)).max(100).optional(),
});
export type OpenConversation = z.infer<typeof OpenConversationSchema>;

type OpenRefusal = {
  ok: false;
  code: "customer.not-found" | "order.not-found" | "tool.unknown" | "agent.not-authorized";
  message: string;
};

export type OpenResult = { ok: true; conversation: { id: string; tools: string[]; scopes: string[] } } | OpenRefusal;

export type PlanResult = { ok: true; conversation: NewConversation } | OpenRefusal;

/**
 * Opens a conversation for one authenticated agent and one customer of the agent's tenant. Scopes come from
 * the agent's permissions, narrowed to what the exposed tools need; the request can only narrow the tools.
 */
export async function openConversation(
  agent: { userId: string; tenantId: string },
  input: OpenConversation,
): Promise<OpenResult> {
  const planned = await planConversation(agent, input);
  if (!planned.ok) return planned;
  return { ok: true, conversation: await insertConversation(db, planned.conversation) };
}

/**
 * The conversation `openConversation` would store, checked and not yet stored: for a caller that stores it in a
 * transaction of its own.
 */
export async function planConversation(
  agent: { userId: string; tenantId: string },
  input: OpenConversation,
): Promise<PlanResult> {
  const user = await findAgentPermissions(db, agent);
  if (!user || scopesFor(user).length === 0)
    return { ok: false, code: "agent.not-authorized", message: "only active agents open conversations" };

  // An upstream server's tool is exposed only when named, and only once an admin reviewed it.
  const asked = input.tools ?? [];
  const upstream = await exposableTools(agent.tenantId, asked.filter(isUpstreamName));
  const unknown = asked.filter((name) => !findTool(name) && !upstream.includes(name));
  if (unknown.length > 0)
    return { ok: false, code: "tool.unknown", message: `unknown tools requested: ${unknown.length}` };
  const tools = input.tools
    ? [...TOOL_NAMES.filter((name) => input.tools?.includes(name)), ...upstream]
    : [...TOOL_NAMES];

  if (!(await customerExists(db, agent.tenantId, input.customer_id)))
    return { ok: false, code: "customer.not-found", message: "no such customer" };
  if (
    input.order_id !== undefined &&
    !(await customerOrderExists(db, agent.tenantId, input.customer_id, input.order_id))
  )
    return { ok: false, code: "order.not-found", message: "no such order for this customer" };

  const needed = new Set(tools.map((name) => findTool(name)?.scope));
  const scopes = scopesFor(user).filter((scope) => needed.has(scope));
  return {
    ok: true,
    conversation: {
      id: newId("conv"),
      tenantId: agent.tenantId,
      agentId: agent.userId,
      customerId: input.customer_id,
      orderId: input.order_id ?? null,
      tools,
      scopes,
    },
  };
}
