import { GET as toolCallRoute } from "../app/api/v1/tool-calls/[id]/route";
import { POST as proposeRoute } from "../app/api/v1/conversations/[id]/tool-calls/route";
import { authenticateApiKey } from "../lib/auth/api-keys";
import { authenticateForConversation } from "../lib/conversations";
import { db, sql } from "../lib/db";
import { proposeToolCall } from "../lib/gateway/pipeline";
import { checkRate } from "../lib/gateway/rate";
import { readBoundedBody } from "../lib/api/http";
import { newId } from "../lib/ids";
import { createWorld } from "../tests/support/world";
import { benchDatabase, summarize } from "./common";
const database = await benchDatabase();
const world = await createWorld({ rateConversationPerMin: 1_000_000, rateKeyPerMin: 1_000_000 });
const conversationId = (await db.conversation.create({ data: { id: newId("conv"), tenantId: world.tenantId, agentId: world.users.agent, customerId: world.customers.ana, tools: ["get_order", "issue_refund"], scopes: ["orders:read", "refunds:write"] } })).id;
const body = JSON.stringify({ name: "get_order", arguments: { order_id: world.orders.o1001 } });
const enc = new TextEncoder();
const first = await proposeToolCall({ ...(await authenticateForConversation(`Bearer ${world.keys.agent}`, conversationId))!.found!, apiKeyId: null, callKey: null, raw: { bytes: enc.encode(body), truncated: false } });
const variants: Record<string, () => Promise<unknown>> = {
  route: async () => { const r = await proposeRoute(new Request(`http://b/api/v1/conversations/${conversationId}/tool-calls`, { method: "POST", headers: { authorization: `Bearer ${world.keys.agent}` }, body }), { params: Promise.resolve({ id: conversationId }) }); await r.text(); },
  lookupAndGateway: async () => { const a = (await authenticateForConversation(`Bearer ${world.keys.agent}`, conversationId))!; await proposeToolCall({ ...a.found!, apiKeyId: a.agent.apiKeyId, callKey: null, raw: { bytes: enc.encode(body), truncated: false } }); },
  lookupOnly: async () => { await authenticateForConversation(`Bearer ${world.keys.agent}`, conversationId); },
  lookupRate: async () => { const a = (await authenticateForConversation(`Bearer ${world.keys.agent}`, conversationId))!; await checkRate(sql, a.found!.conversation, a.agent.apiKeyId, a.found!.policy); },
  requestBody: async () => { const req = new Request("http://b/x", { method: "POST", body }); await readBoundedBody(req); },
  getRoute: async () => { const r = await toolCallRoute(new Request(`http://b/api/v1/tool-calls/${first.id}`, { headers: { authorization: `Bearer ${world.keys.agent}` } }), { params: Promise.resolve({ id: first.id }) }); if (r.status !== 200) throw new Error(String(r.status)); await r.text(); },
  baseline: async () => { const who = await authenticateApiKey(`Bearer ${world.keys.agent}`); const order = await db.order.findFirst({ where: { id: world.orders.o1001, tenantId: who!.tenantId }, select: { id: true, status: true, totalCents: true, refundedCents: true, currency: true } }); await Response.json(order).text(); },
};
const res: Record<string, number[]> = {};
for (const k in variants) res[k] = [];
for (let w = 0; w < 100; w++) for (const k in variants) await variants[k]();
for (let i = 0; i < 600; i++) for (const k in variants) { const s = performance.now(); await variants[k](); res[k].push(performance.now() - s); }
for (const k in res) console.log(k.padEnd(18), summarize(res[k]).median.toFixed(3));
await database.stop(); process.exit(0);
