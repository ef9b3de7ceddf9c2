import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publishRules } from "@/lib/admin/rules/publishing/publish";
import { replayRules } from "@/lib/admin/rules/replay";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { db } from "@/lib/db";
import { validateRules } from "@/lib/policy-rules/validate";
import { closeUpstreams } from "@/lib/upstream/servers/client";
import { putRules } from "../policy-rules/support";
import { conversationFor, newCallKey, propose } from "../support/api";
import { supervisorOf } from "../support/calls";
import { noProof } from "../support/step-up";
import { createWorld, type World } from "../support/world";
import { FILESYSTEM_SERVER, reviewAll, useLocalServers } from "./support";

// The tenant's Cedar rules on upstream calls (docs/decisions/026, amendment): the tool is the action and its
// arguments, typed from the pinned input schema, are the context. Here `write_file` is allowed by the admin's
// verdict; a rule holds it under the folder's `etc`, another denies a `.secret` file, and an order rule with no
// action constraint still validates beside them.

let world: World;
let folder: string;
let conversation: string;

const rulesFor = (etc: string) => `
@id("files-etc")
@hold("Writes under etc wait for a supervisor.")
forbid (principal, action == Action::"files__write_file", resource)
when { context.args.path like "${etc}/*" };

@id("files-secret")
@deny("no-secret-files")
forbid (principal, action in [Action::"files__write_file"], resource)
when { context.args.path like "*.secret" && context.server == "files" };

@id("old-orders")
@hold("Orders older than 90 days wait.")
forbid (principal, action, resource) when { resource.age_days > 90 };
`;

beforeAll(async () => {
  world = await createWorld();
  folder = realpathSync(mkdtempSync(path.join(tmpdir(), "toolgate-rules-")));
  mkdirSync(path.join(folder, "etc"));
  const [server] = await useLocalServers(folder, [
    { tenant: world.tenantId, name: "files", command: process.execPath, args: [FILESYSTEM_SERVER, folder] },
  ]);
  await reviewAll(world, server, { read_text_file: "default", write_file: "allow" });
  const admin = { id: world.users.admin, tenantId: world.tenantId };
  const published = await publishRules(
    admin,
    { text: rulesFor(path.join(folder, "etc")), status: "live" },
    await noProof(admin.id),
  );
  expect(published).toMatchObject({ ok: true, published: { status: "live" } });
  conversation = await conversationFor(world.keys.agent, {
    customer_id: world.customers.ana,
    tools: ["files__read_text_file", "files__write_file"],
  });
}, 60_000);

afterAll(async () => {
  await closeUpstreams();
});

const write = (file: string, content: string) =>
  propose(
    world.keys.agent,
    conversation,
    { name: "files__write_file", arguments: { path: file, content } },
    newCallKey(),
  );

const logged = (id: string) => db.decisionLog.findMany({ where: { toolCallId: id }, orderBy: { id: "asc" } });

describe("Cedar rules on upstream calls", () => {
  it("lets a write no rule names run on the admin's verdict", async () => {
    const target = path.join(folder, "notes.txt");
    const sent = await write(target, "allowed\n");
    expect(sent.json.code).toBe("upstream.called");
    expect(readFileSync(target, "utf8")).toBe("allowed\n");
  });

  it("holds a write under etc for a supervisor, with the rule's reason, and sends it once approved", async () => {
    const target = path.join(folder, "etc", "hosts");
    const held = await write(target, "127.0.0.1 upstream\n");
    expect(held.json).toMatchObject({
      code: "approval.required",
      model: { reason: "Writes under etc wait for a supervisor." },
    });
    expect(existsSync(target)).toBe(false);
    const [row] = await logged(held.json.id);
    expect(row.detail).toMatchObject({
      upstream: { rules: { live: { verdict: "hold", rules: [{ id: "files-etc" }] } } },
    });
    const approved = await approveRequest(supervisorOf(world), held.json.approval!.id);
    expect(approved).toMatchObject({ ok: true, outcome: { code: "upstream.called" } });
    expect(readFileSync(target, "utf8")).toBe("127.0.0.1 upstream\n");
  });

  it("denies a write a rule forbids, and nothing reaches the server", async () => {
    const target = path.join(folder, "keys.secret");
    const denied = await write(target, "never\n");
    expect(denied.json.code).toBe("policy.rule-denied");
    expect(existsSync(target)).toBe(false);
    expect(await db.upstreamCall.findUnique({ where: { toolCallId: denied.json.id } })).toBeNull();
    expect(await db.approvalRequest.count({ where: { originCallId: denied.json.id } })).toBe(0);
    const [row] = await logged(denied.json.id);
    expect(row.detail).toMatchObject({
      upstream: { rules: { live: { verdict: "deny", rules: [{ id: "files-secret", code: "no-secret-files" }] } } },
    });
    // The rules page replays recorded decisions of the built-in tools only: an upstream call's rules do not break it.
    const replayed = await replayRules(world.tenantId, rulesFor(path.join(folder, "etc")), 7);
    expect(replayed).toMatchObject({ ok: true, report: { decisions: 0, differences: [] } });
  });

  it("re-checks the rules at approval: a deny rule published while the write waited refuses it, nothing sent", async () => {
    const target = path.join(folder, "etc", "motd");
    const held = await write(target, "hello\n");
    expect(held.json.code).toBe("approval.required");
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    const tightened = `${rulesFor(path.join(folder, "etc"))}
@id("files-motd") @deny("no-motd")
forbid (principal, action == Action::"files__write_file", resource) when { context.args.path like "*/motd" };`;
    const published = await publishRules(admin, { text: tightened, status: "live" }, await noProof(admin.id));
    expect(published).toMatchObject({ ok: true, published: { status: "live" } });
    const approved = await approveRequest(supervisorOf(world), held.json.approval!.id);
    expect(approved).toMatchObject({ ok: false, code: "approval.recheck-failed" });
    expect(existsSync(target)).toBe(false);
    expect(await db.upstreamCall.findUnique({ where: { toolCallId: held.json.id } })).toMatchObject({ status: "held" });
  });

  it("refuses a rule that names a built-in tool and an upstream one together", () => {
    const mixed = validateRules(
      '@id("m") @hold("x") forbid (principal, action in [Action::"files__write_file", Action::"issue_refund"], resource);',
    );
    expect(mixed).toMatchObject({ ok: false, errors: [expect.stringContaining("not both")] });
  });

  it("fails closed on a rule that reads an argument the tool does not have: the write is refused", async () => {
    await putRules(
      world,
      '@id("mode") @deny("no-mode") forbid (principal, action == Action::"files__write_file", resource) when { context.args.mode == "x" };',
    );
    const target = path.join(folder, "after.txt");
    const refused = await write(target, "never\n");
    expect(refused.json.code).toBe("policy.rules-failed");
    expect(existsSync(target)).toBe(false);
    const [row] = await logged(refused.json.id);
    expect(JSON.stringify(row.detail)).toContain("mode");
    const read = await propose(
      world.keys.agent,
      conversation,
      { name: "files__read_text_file", arguments: { path: path.join(folder, "notes.txt") } },
      newCallKey(),
    );
    expect(read.json.code).toBe("upstream.called");
  });
});
