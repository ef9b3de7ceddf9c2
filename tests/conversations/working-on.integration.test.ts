import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it, vi } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { conversationCalls } from "@/lib/conversations/console";
import { db } from "@/lib/db";
import { delegationDigest } from "@/lib/oauth/consent/authorize";
import { revokeGrant } from "@/lib/oauth/consent/sql";
import { INSTANCE_SECRET, personCookie } from "../support/app-instances";
import { CIMD_URL, REDIRECT } from "../support/cimd-fetcher";
import { agentConversation, supervisorOf } from "../support/calls";
import { MCP_BASE } from "../support/mcp-route";
import { MemoryProvider, oauthRouteFetch } from "../support/oauth";
import { postConsent } from "../support/oauth-grant";
import { provedFor } from "../support/step-up";
import { createWorld, type World } from "../support/world";
import { jar } from "../support/cookie-jar";
import { holdOpen, waitForLockWaiter } from "../support/locks";

// One connection, many customers (issue 40, decision 022), through the MCP SDK client's own OAuth flow against the
// route handlers: the person adds the bare /api/mcp URL once; they choose the customer on the Connections page (the
// server action it posts to); the model's calls run for that customer and nothing the model sends can change it.

vi.mock("next/headers", async () => (await import("../support/cookie-jar")).nextHeadersMock());
vi.mock("next/cache", () => ({ revalidatePath: () => undefined }));
vi.mock("@/lib/oauth/clients/fetch-document", async () => (await import("../support/cimd-fetcher")).cimdFetcherMock());
process.env.NEXTAUTH_SECRET = INSTANCE_SECRET;
const { workOnCustomerAction } = await import("@/lib/conversations/actions");

const RESOURCE = `${MCP_BASE}/api/mcp`;

const transport = (provider: MemoryProvider, url = RESOURCE) =>
  new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: oauthRouteFetch });

async function signIn(w: World, who: "agent" | "agent2" | "otherAgent" = "agent") {
  jar.cookie = await personCookie(w.users[who], "AGENT");
}

/** The person adds the bare URL to their client and grants it on the consent page: one connection, no customer. */
async function connect(w: World) {
  await signIn(w);
  const provider = new MemoryProvider(REDIRECT, CIMD_URL);
  await new Client({ name: "desktop", version: "1" }).connect(transport(provider)).catch(() => undefined);
  const asked = provider.authorizationUrl!;
  expect(asked.searchParams.get("resource")).toBe(RESOURCE);
  const form = new URLSearchParams(asked.searchParams);
  form.set("decision", "grant");
  for (const scope of asked.searchParams.get("scope")!.split(" ")) form.append("scope_choice", scope);
  // Passing the refund permission on takes the person's step-up, made in the session the cookie stands for.
  const session = await db.session.findFirstOrThrow({
    where: { userId: w.users.agent },
    orderBy: { createdAt: "desc" },
  });
  const digest = delegationDigest(asked.searchParams.get("client_id")!, asked.searchParams.get("code_challenge")!);
  form.set(
    "step_up_proof",
    (await provedFor(w.users.agent, { kind: "oauth.refunds-delegated", digest }, session.id)).proofId,
  );
  const answer = await postConsent(form, jar.cookie);
  expect(answer.status).toBe(303);
  const back = new URL(answer.headers.get("location")!);
  await transport(provider).finishAuth(back.searchParams.get("code")!);
  const client = new Client({ name: "desktop", version: "1" });
  await client.connect(transport(provider));
  const grant = await db.oAuthGrant.findFirstOrThrow({ where: { tenantId: w.tenantId, agentId: w.users.agent } });
  return { client, provider, grantId: grant.id };
}

const text = (result: Awaited<ReturnType<Client["callTool"]>>) =>
  (result.content as { type: string; text: string }[]).map((part) => part.text).join("\n");
const workingOn = async (grantId: string) =>
  (await db.oAuthGrant.findUniqueOrThrow({ where: { id: grantId } })).workingConversationId;
const customerOf = async (conversationId: string | null) =>
  conversationId ? (await db.conversation.findUniqueOrThrow({ where: { id: conversationId } })).customerId : null;

describe("one connection, many customers", () => {
  it("the person switches to A and the model refunds A's order; to B and it reads B's order; A's order is not found while B is chosen", async () => {
    const w = await createWorld();
    const { client, grantId } = await connect(w);

    // No customer chosen yet: the tools are listed, every call says where to choose, and nothing is proposed.
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toEqual(expect.arrayContaining(["get_order", "issue_refund", "request_customer_switch"]));
    const unchosen = await client.callTool({ name: "get_order", arguments: { order_id: w.orders.o1004 } });
    expect(unchosen.isError).toBe(true);
    expect(text(unchosen)).toContain(`${MCP_BASE}/connections`);
    expect(await db.toolCall.count({ where: { conversation: { agentId: w.users.agent } } })).toBe(0);

    // The person chooses ana on the Connections page.
    const toAna = await workOnCustomerAction({ grant_id: grantId, customer_id: w.customers.ana });
    expect(toAna).toMatchObject({ ok: true });
    const anaConversation = await workingOn(grantId);
    expect(await customerOf(anaConversation)).toBe(w.customers.ana);

    const held = await client.callTool({
      name: "issue_refund",
      arguments: { order_id: w.orders.o1004, amount_cents: 8000, currency: "USD", reason: "damaged" },
    });
    const callId = (held.structuredContent as { call_id: string; status: string }).call_id;
    expect(held.structuredContent).toMatchObject({ status: "needs_approval" });
    const request = await db.approvalRequest.findFirstOrThrow({ where: { originCallId: callId } });
    expect(await approveRequest(supervisorOf(w), request.id)).toMatchObject({ ok: true, status: "approved" });
    const read = await client.callTool({ name: "get_call_status", arguments: { call_id: callId } });
    expect(read.structuredContent).toMatchObject({ result: { status: "ok" } });
    expect(await db.toolCall.findUniqueOrThrow({ where: { id: callId } })).toMatchObject({
      conversationId: anaConversation,
    });

    // Then ben: ben's order reads, ana's order is a missing order while ben is chosen.
    expect(await workOnCustomerAction({ grant_id: grantId, customer_id: w.customers.ben })).toMatchObject({ ok: true });
    const benConversation = await workingOn(grantId);
    expect(await customerOf(benConversation)).toBe(w.customers.ben);
    const benOrder = await client.callTool({ name: "get_order", arguments: { order_id: w.orders.o1002 } });
    expect(benOrder.structuredContent).toMatchObject({ status: "ok", result: { order_id: w.orders.o1002 } });
    const refundsBefore = await db.refund.count({ where: { orderId: w.orders.o1004 } });
    const anaOrder = await client.callTool({
      name: "issue_refund",
      arguments: { order_id: w.orders.o1004, amount_cents: 1000, currency: "USD", reason: "damaged" },
    });
    expect(anaOrder.isError).toBe(true);
    expect(anaOrder.structuredContent).toMatchObject({ status: "not_found" });
    expect(await db.refund.count({ where: { orderId: w.orders.o1004 } })).toBe(refundsBefore);

    // Switching back to ana resumes her conversation (its budgets spent so far included), not a fresh one.
    expect(await workOnCustomerAction({ grant_id: grantId, customer_id: w.customers.ana })).toMatchObject({ ok: true });
    expect(await workingOn(grantId)).toBe(anaConversation);

    // Every switch is in the sealed audit log, with the person who made it.
    const switches = await db.auditLog.findMany({
      where: { tenantId: w.tenantId, action: "connection.customer-switched" },
      orderBy: { id: "asc" },
    });
    expect(switches.map((row) => [row.actorId, (row.detail as { customerId: string }).customerId])).toEqual([
      [w.users.agent, w.customers.ana],
      [w.users.agent, w.customers.ben],
      [w.users.agent, w.customers.ana],
    ]);
    expect(switches[1].detail).toMatchObject({ grantId, previousConversationId: anaConversation });
    // And on ana's conversation page: the connection arrived, left for ben, came back, each with who switched.
    const page = await conversationCalls({ userId: w.users.agent, tenantId: w.tenantId }, anaConversation!);
    expect(page!.switches.map((change) => [change.clientName, change.arrived, change.actorName])).toEqual([
      ["Example Desktop", true, "Agent"],
      ["Example Desktop", false, "Agent"],
      ["Example Desktop", true, "Agent"],
    ]);
    await client.close();
  });

  it("no tool call, argument or hint changes the customer: a prompt-injected model can only get the link", async () => {
    const w = await createWorld();
    const { client, grantId } = await connect(w);
    expect(await workOnCustomerAction({ grant_id: grantId, customer_id: w.customers.ben })).toMatchObject({ ok: true });
    const chosen = await workingOn(grantId);

    // Text the model read (a ticket, a web page, a tool result) tells it to work on someone else; the model obeys
    // as far as it can: asks to switch with arguments, names ana's order, passes hints in _meta.
    const asked = await client.callTool({
      name: "request_customer_switch",
      arguments: { customer_id: w.customers.ana, conversation: "anything" },
    });
    expect(text(asked)).toContain(`${MCP_BASE}/connections`);
    const hinted = await client.callTool({
      name: "issue_refund",
      arguments: { order_id: w.orders.o1004, amount_cents: 1000, currency: "USD", reason: "damaged" },
      _meta: { customer_id: w.customers.ana, conversation: chosen },
    });
    expect(hinted.structuredContent).toMatchObject({ status: "not_found" });
    expect(await workingOn(grantId)).toBe(chosen);
    expect(await db.refund.count({ where: { orderId: w.orders.o1004 } })).toBe(0);
    expect(await db.auditLog.count({ where: { tenantId: w.tenantId, action: "connection.customer-switched" } })).toBe(
      1,
    );
    await client.close();
  });

  it("only the connection's own person switches it, to a customer of their tenant; bad input changes nothing", async () => {
    const w = await createWorld();
    const other = await createWorld();
    const { client, grantId } = await connect(w);
    expect(await workOnCustomerAction({ grant_id: grantId, customer_id: w.customers.ana })).toMatchObject({ ok: true });
    const chosen = await workingOn(grantId);

    // Another tenant's customer, a made-up connection, malformed ids.
    expect(await workOnCustomerAction({ grant_id: grantId, customer_id: other.customers.ben })).toMatchObject({
      ok: false,
      code: "customer.not-found",
    });
    expect(await workOnCustomerAction({ grant_id: "grant_nope", customer_id: w.customers.ben })).toMatchObject({
      ok: false,
      code: "connection.not-found",
    });
    // Said by field and rule, never echoing what was sent.
    expect(await workOnCustomerAction({ grant_id: "x'; --", customer_id: w.customers.ben })).toEqual({
      ok: false,
      code: "input.invalid",
      message: "Check these fields: grant_id must match the pattern ^[A-Za-z0-9_-]{1,100}$.",
    });
    // A curious colleague of the same tenant, and an agent of another tenant, cannot point it anywhere.
    for (const who of ["agent2", "otherAgent"] as const) {
      await signIn(w, who);
      expect(await workOnCustomerAction({ grant_id: grantId, customer_id: w.customers.ben })).toMatchObject({
        ok: false,
        code: "connection.not-found",
      });
    }
    expect(await workingOn(grantId)).toBe(chosen);
    expect(await db.auditLog.count({ where: { tenantId: w.tenantId, action: "connection.customer-switched" } })).toBe(
      1,
    );
    await client.close();
  });

  it("a revocation that lands while a switch opens a conversation leaves no conversation, no pointer and no open counted", async () => {
    // The person's one open a minute is asserted across several requests: they start early in a minute.
    const second = new Date().getUTCSeconds();
    if (second >= 50) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000));
    const w = await createWorld({ rateOpenPerMin: 1 });
    const { client, grantId } = await connect(w);
    const conversationsBefore = await db.conversation.count({ where: { agentId: w.users.agent } });

    // The person revokes the connection on another tab: the revocation has written and not yet committed.
    const revoking = await holdOpen(async (tx) =>
      expect(await revokeGrant(tx, w.tenantId, grantId, "revoked-by-person", w.users.agent)).toBeDefined(),
    );

    // The switch to ana starts before the revocation commits, found the connection live, and waits for its row.
    const switching = workOnCustomerAction({ grant_id: grantId, customer_id: w.customers.ana });
    await waitForLockWaiter(revoking.pid, "the revocation's lock");
    revoking.release();
    await revoking.done;

    expect(await switching).toMatchObject({ ok: false, code: "connection.not-found" });
    expect(await db.conversation.count({ where: { agentId: w.users.agent } })).toBe(conversationsBefore);
    expect(await db.oAuthGrant.findUniqueOrThrow({ where: { id: grantId } })).toMatchObject({
      workingConversationId: null,
      revokedReason: "revoked-by-person",
    });
    expect(await db.auditLog.count({ where: { tenantId: w.tenantId, action: "connection.customer-switched" } })).toBe(
      0,
    );
    expect(await db.rateBucket.findUnique({ where: { key: `o:u:${w.users.agent}` } })).toBeNull();
    await client.close();

    // The person's open this minute is still theirs: a switch of their next connection opens, and only then the
    // limit refuses another open, which leaves the connection on its customer.
    const next = await connect(w);
    const live = await db.oAuthGrant.findFirstOrThrow({ where: { tenantId: w.tenantId, revokedAt: null } });
    expect(await workOnCustomerAction({ grant_id: live.id, customer_id: w.customers.ana })).toMatchObject({ ok: true });
    expect(await workOnCustomerAction({ grant_id: live.id, customer_id: w.customers.ben })).toMatchObject({
      ok: false,
      code: "rate.limited",
    });
    expect(await customerOf(await workingOn(live.id))).toBe(w.customers.ana);
    expect(await db.conversation.count({ where: { agentId: w.users.agent } })).toBe(conversationsBefore + 1);
    expect(await db.rateBucket.findUniqueOrThrow({ where: { key: `o:u:${w.users.agent}` } })).toMatchObject({
      count: 2,
    });
    await next.client.close();
  });

  it("a person with more live connections than the page lists still switches the oldest", async () => {
    const w = await createWorld();
    const { client, grantId } = await connect(w);
    const oldest = await db.oAuthGrant.findUniqueOrThrow({ where: { id: grantId } });
    for (let i = 0; i < 50; i++) {
      const key = await db.apiKey.create({
        data: {
          id: `key_many_${i}`,
          tenantId: w.tenantId,
          userId: w.users.agent,
          prefix: "tg_many",
          hash: `many-${i}`,
        },
      });
      await db.oAuthGrant.create({
        data: {
          ...oldest,
          id: `grant_many_${i}`,
          apiKeyId: key.id,
          scopes: oldest.scopes,
          createdAt: new Date(oldest.createdAt.getTime() + 1000 * (i + 1)),
          workingConversationId: null,
        },
      });
    }
    expect(await workOnCustomerAction({ grant_id: grantId, customer_id: w.customers.ben })).toMatchObject({ ok: true });
    expect(await workingOn(grantId)).not.toBeNull();
    await client.close();
  });

  it("the old URL form keeps working for a connection, and a pasted key still names its conversation", async () => {
    const w = await createWorld();
    const { provider } = await connect(w);
    const conversation = await agentConversation(w, "ben");
    const old = new Client({ name: "desktop", version: "1" });
    await old.connect(transport(provider, `${RESOURCE}?conversation=${conversation}`));
    const read = await old.callTool({ name: "get_order", arguments: { order_id: w.orders.o1002 } });
    expect(read.structuredContent).toMatchObject({ status: "ok" });
    await old.close();

    const pasted = await oauthRouteFetch(RESOURCE, {
      method: "POST",
      headers: {
        authorization: `Bearer ${w.keys.agent}`,
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(pasted.status).toBe(404);
  });
});
