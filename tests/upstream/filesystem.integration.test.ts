import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { denyRequest } from "@/lib/approvals/decision/deny";
import { cardFacts, queueChoices } from "@/lib/approvals/desk/cards";
import { parseQueueFilters } from "@/lib/approvals/desk/filters";
import { pendingQueue } from "@/lib/approvals/desk/queue";
import { db } from "@/lib/db";
import { closeUpstreams } from "@/lib/upstream/servers/client";
import { conversationFor, getToolCall, getTools, newCallKey, propose } from "../support/api";
import { supervisorOf } from "../support/calls";
import { createWorld, type World } from "../support/world";
import { FILESYSTEM_SERVER, reviewAll, useLocalServers } from "./support";

// server-filesystem from npm, over stdio in a temporary folder, behind toolgate: reads run, writes wait for a
// supervisor and are sent exactly once when approved, never when denied.

let world: World;
let folder: string;
let conversation: string;

const TOOLS = ["files__read_text_file", "files__write_file", "files__edit_file"];

beforeAll(async () => {
  world = await createWorld();
  folder = realpathSync(mkdtempSync(path.join(tmpdir(), "toolgate-files-")));
  writeFileSync(path.join(folder, "hello.txt"), "hello from upstream\n");
  const [server] = await useLocalServers(folder, [
    { tenant: world.tenantId, name: "files", command: process.execPath, args: [FILESYSTEM_SERVER, folder] },
  ]);
  await reviewAll(world, server, { read_text_file: "default", write_file: "default", edit_file: "default" });
  conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana, tools: TOOLS });
}, 60_000);

afterAll(async () => {
  await closeUpstreams();
});

const call = (name: string, args: Record<string, unknown>, key = newCallKey()) =>
  propose(world.keys.agent, conversation, { name, arguments: args }, key);

const upstreamCall = (id: string) => db.upstreamCall.findUnique({ where: { toolCallId: id } });

describe("server-filesystem over stdio behind toolgate", () => {
  it("lists the reviewed tools namespaced by server, with their descriptions in full", async () => {
    const listed = await getTools(world.keys.agent, conversation);
    const names = (listed.json.tools as { name: string }[]).map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(TOOLS));
    const write = (listed.json.tools as { name: string; description: string }[]).find(
      (tool) => tool.name === "files__write_file",
    );
    expect(write?.description.length).toBeGreaterThan(100);
  });

  it("runs a read at once and returns the upstream's content", async () => {
    const read = await call("files__read_text_file", { path: path.join(folder, "hello.txt") });
    expect(read.status).toBe(200);
    expect(read.json.code).toBe("upstream.called");
    expect(JSON.stringify(read.json.model.result)).toContain("hello from upstream");
    expect((await upstreamCall(read.json.id))?.status).toBe("answered");
    const logged = await db.decisionLog.findMany({ where: { toolCallId: read.json.id }, orderBy: { id: "asc" } });
    expect(logged.map((row) => row.code)).toEqual(["upstream.outcome-unknown", "upstream.called"]);
    const detail = logged[1].detail as { upstream: { result_digest: string; result_excerpt: string } };
    expect(detail.upstream.result_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(detail.upstream.result_excerpt).toContain("hello from upstream");
  });

  it("holds a write, and once approved sends it exactly once", async () => {
    const target = path.join(folder, "approved.txt");
    const held = await call("files__write_file", { path: target, content: "line one\nline two\n" });
    expect(held.json.code).toBe("approval.required");
    expect(held.json.approval?.preview).toMatchObject({
      kind: "upstream",
      server: "files",
      upstream_tool: "write_file",
      annotations_claimed: { readOnlyHint: false },
    });
    expect(existsSync(target)).toBe(false);
    expect((await upstreamCall(held.json.id))?.status).toBe("held");
    const mail = await db.outboxMessage.findMany({
      where: {
        tenantId: world.tenantId,
        subject: "Approval needed: files__write_file on files",
        body: { contains: held.json.approval!.id },
      },
    });
    expect(mail.map((message) => message.kind)).toContain("approval_email");
    expect(mail[0].body).toContain('\n"content": "line one\\nline two\\n"\n');

    const approved = await approveRequest(supervisorOf(world), held.json.approval!.id);
    expect(approved).toMatchObject({ ok: true, status: "approved", outcome: { code: "upstream.called" } });
    expect(readFileSync(target, "utf8")).toBe("line one\nline two\n");
    const sent = await upstreamCall(held.json.id);
    expect(sent).toMatchObject({ status: "answered" });
    expect(sent?.sentAt).not.toBeNull();

    const read = await getToolCall(world.keys.agent, held.json.id);
    expect(read.json).toMatchObject({ code: "upstream.called", model: { status: "ok", result: { isError: false } } });

    writeFileSync(target, "changed by someone else\n");
    const again = await approveRequest(supervisorOf(world), held.json.approval!.id);
    expect(again).toMatchObject({ ok: false, code: "approval.already-decided" });
    expect(readFileSync(target, "utf8")).toBe("changed by someone else\n");
    const row = await db.toolCall.findUnique({ where: { id: held.json.id } });
    expect(row?.code).toBe("upstream.called");
  });

  it("puts held upstream calls on the desk, where the tool filter finds them", async () => {
    const held = await call("files__write_file", { path: path.join(folder, "desk.txt"), content: "desk\n" });
    expect((await queueChoices(world.tenantId)).tools).toContain("files__write_file");
    const filtered = await pendingQueue(world.tenantId, { filters: parseQueueFilters({ tool: "files__write_file" }) });
    expect(filtered.map((item) => item.id)).toContain(held.json.approval!.id);
    const facts = await cardFacts(world.tenantId, filtered);
    expect(facts[held.json.approval!.id]).toMatchObject({ orderNow: null, refunds: [] });
  });

  it("sends nothing for a denied write", async () => {
    const target = path.join(folder, "denied.txt");
    const held = await call("files__write_file", { path: target, content: "never\n" });
    expect(held.json.code).toBe("approval.required");
    const denied = await denyRequest(supervisorOf(world), held.json.approval!.id, "not this file");
    expect(denied).toMatchObject({ ok: true, status: "denied" });
    expect(existsSync(target)).toBe(false);
    expect((await upstreamCall(held.json.id))?.status).toBe("held");
  });

  it("refuses arguments outside the pinned input schema before anything is held or sent", async () => {
    const target = path.join(folder, "invalid.txt");
    const invalid = await call("files__write_file", { path: target, content: 42 });
    expect(invalid.json).toMatchObject({
      code: "schema.invalid",
      model: { status: "invalid_arguments", paths: ["content"] },
    });
    expect(await upstreamCall(invalid.json.id)).toBeNull();
    expect(await db.approvalRequest.count({ where: { originCallId: invalid.json.id } })).toBe(0);
    expect(existsSync(target)).toBe(false);
  });

  it("answers the same write under the same call key with the first outcome, holding it once", async () => {
    const key = newCallKey();
    const args = { path: path.join(folder, "keyed.txt"), content: "once\n" };
    const first = await call("files__write_file", args, key);
    const second = await call("files__write_file", args, key);
    expect(second.json).toMatchObject({ id: first.json.id, replayed: true, code: "approval.required" });
    const reused = await call("files__write_file", { ...args, content: "other\n" }, key);
    expect(reused.json.code).toBe("call-key.reused");
    expect(
      await db.approvalRequest.count({
        where: {
          conversationId: conversation,
          toolName: "files__write_file",
          argsHash: { not: "" },
          originCallId: first.json.id,
        },
      }),
    ).toBe(1);
  });

  it("does not expose a tool the conversation was not opened with", async () => {
    const other = await conversationFor(world.keys.agent, {
      customer_id: world.customers.ana,
      tools: ["files__read_text_file"],
    });
    const write = await propose(
      world.keys.agent,
      other,
      { name: "files__write_file", arguments: { path: path.join(folder, "x.txt"), content: "x" } },
      newCallKey(),
    );
    expect(write.json.code).toBe("tool.not-available");
    // Logged like an unknown built-in name: a caller's made-up names never become rows' or metrics' labels.
    expect((await db.toolCall.findUnique({ where: { id: write.json.id } }))?.toolName).toBe("(unknown)");
  });
});
