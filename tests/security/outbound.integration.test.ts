import { createServer, type Server } from "node:http";
import { afterEach, describe, expect, it, vi } from "vitest";
import { db } from "@/lib/db";
import { deliverOutbox } from "@/lib/mail/delivery";
import { encryptSecret, webhookSecretContext, webhookUrlContext } from "@/lib/security/secrets";
import { METADATA_LIMITS } from "@/lib/oauth/clients/clients";
import { fetchMetadataDocument } from "@/lib/oauth/clients/fetch-document";
import { classifyAddress, outboundFetch, OutboundRefused } from "@/lib/security/outbound";
import { setWebhookApproved } from "../support/admin-changes";
import { agentConversation, proposeAsAgent } from "../support/calls";
import { createWorld } from "../support/world";

// Server-side request forgery through the tenant's webhook: an admin (or whoever holds an admin's session) points
// it at what only this server can reach. Refused when saved, and again when sent, on the address actually
// connected; redirects are not followed. The DNS answers here are the attacker's: a name the test controls.

const dnsAnswers = vi.hoisted(() => new Map<string, string[]>());
// Lookups of the test's names running now, and the most that ever ran at once.
const lookups = vi.hoisted(() => ({ running: 0, most: 0 }));
/** How long a silent name server keeps a lookup before the resolver gives up (the system's is about 30 s). */
const SILENT_MS = 7000;
vi.mock("node:dns/promises", async (original) => {
  const real = await original<typeof import("node:dns/promises")>();
  const lookup = async (host: string, options: object) => {
    const answer = dnsAnswers.get(host);
    if (!answer) return real.lookup(host, options as { all: true });
    if (answer[0] !== "silent") return answer.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
    lookups.most = Math.max(lookups.most, ++lookups.running);
    return new Promise((_, reject) =>
      setTimeout(() => {
        lookups.running--;
        reject(new Error(`getaddrinfo EAI_AGAIN ${host}`));
      }, SILENT_MS),
    );
  };
  return { ...real, default: { ...real, lookup }, lookup };
});

const nodeEnv = process.env.NODE_ENV;
afterEach(() => {
  delete process.env.OUTBOUND_ALLOWED_HOSTS;
  (process.env as Record<string, string | undefined>).NODE_ENV = nodeEnv;
  dnsAnswers.clear();
});

/** IPv6 spellings that reach an internal IPv4 address (127.0.0.1, 10.0.0.5) or sit in a range no receiver uses. */
const IPV6_TO_IPV4 = [
  "::127.0.0.1",
  "::a00:5",
  "::ffff:0:127.0.0.1",
  "::ffff:0:a00:5",
  "2002:7f00:1::1",
  "2001:0:7f00:1::1",
  "64:ff9b::127.0.0.1",
  "64:ff9b::a00:5",
  "64:ff9b:1::7f00:1",
  "fec0::1",
];

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as { port: number }).port };
}

async function webhookState(tenantId: string) {
  const tenant = await db.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { webhookUrl: true } });
  const audits = await db.auditLog.count({ where: { tenantId, action: "webhook.set" } });
  return { url: tenant.webhookUrl, audits };
}

/** A held refund, so the tenant's webhook has one delivery queued; then the sender runs. */
async function queueAndSend(world: Awaited<ReturnType<typeof createWorld>>) {
  const conversation = await agentConversation(world);
  await proposeAsAgent(world, conversation, {
    name: "issue_refund",
    arguments: { order_id: world.orders.o1004, amount_cents: 9000, currency: "USD", reason: "late" },
  });
  await deliverOutbox({ limit: 100, tenantId: world.tenantId, delivery: { sendMail: async () => undefined } });
  return db.outboxMessage.findFirstOrThrow({ where: { tenantId: world.tenantId, kind: "webhook" } });
}

/** A local server that records the path of every request it gets and answers "ok". */
async function recordingServer() {
  const received: string[] = [];
  const { server, port } = await listen((request, response) => {
    received.push(request.url ?? "");
    response.end("ok");
  });
  return { received, server, port };
}

/** The tenant's webhook queued and the sender run: refused before `received`'s server heard of it, unsent, saying why. */
async function expectSendRefused(
  world: Awaited<ReturnType<typeof createWorld>>,
  received: string[],
  why: string | RegExp,
) {
  const row = await queueAndSend(world);
  expect(received).toEqual([]);
  expect(row.status).not.toBe("sent");
  expect(row.lastError).toMatch(why);
}

describe("webhook SSRF", () => {
  it("refuses to save a webhook at loopback, private, link-local, metadata or a name resolving to loopback, storing nothing", async () => {
    const world = await createWorld();
    dnsAnswers.set("metadata.attacker.test", ["169.254.169.254"]);
    dnsAnswers.set("split.attacker.test", ["203.0.113.10", "127.0.0.1"]);
    const targets = [
      "http://127.0.0.1:5432/",
      "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
      "http://10.0.0.5/hook",
      "http://192.168.1.1/",
      "http://172.20.0.3:3000/",
      "http://[::1]:3000/hook",
      "http://[::ffff:127.0.0.1]/",
      "http://[fd00:ec2::254]/",
      "http://2130706433/",
      "http://0x7f.1/",
      "http://localhost:3000/api/metrics",
      "http://metadata.attacker.test/",
      "http://split.attacker.test/",
    ];
    for (const url of targets) {
      const result = await setWebhookApproved(world, { url, secret: "whsec_0123456789abcdef" });
      expect([url, result]).toEqual([
        url,
        { ok: false, code: "outbound.forbidden-address", message: expect.stringMatching(/cannot be used/) },
      ]);
    }
    expect(await webhookState(world.tenantId)).toEqual({ url: null, audits: 0 });
  });

  it("refuses IPv6 forms that reach IPv4 (compatible, SIIT, 6to4, Teredo, NAT64, site-local), as literals and as DNS answers, for webhooks and metadata documents", async () => {
    const world = await createWorld();
    for (const [index, address] of IPV6_TO_IPV4.entries()) {
      dnsAnswers.set(`v6-${index}.attacker.test`, [address]);
      for (const url of [`http://[${address}]/hook`, `http://v6-${index}.attacker.test/hook`]) {
        const result = await setWebhookApproved(world, { url, secret: "whsec_0123456789abcdef" });
        expect([url, result]).toEqual([
          url,
          expect.objectContaining({ ok: false, code: "outbound.forbidden-address" }),
        ]);
      }
      for (const url of [`https://[${address}]/client.json`, `https://v6-${index}.attacker.test/client.json`]) {
        const fetched = await fetchMetadataDocument(new URL(url), METADATA_LIMITS);
        expect([url, fetched]).toEqual([
          url,
          { ok: false, reason: expect.stringMatching(/this server sends only to public addresses/) },
        ]);
      }
    }
    expect(await webhookState(world.tenantId)).toEqual({ url: null, audits: 0 });
  });

  it("judges NAT64 and SIIT forms as the IPv4 address they carry: a public one passes, a metadata one is refused even when listed", async () => {
    expect(["64:ff9b::203.0.113.10", "::ffff:0:203.0.113.10"].map(classifyAddress)).toEqual(["public", "public"]);
    expect(["64:ff9b::a9fe:a9fe", "::ffff:0:169.254.169.254"].map(classifyAddress)).toEqual(["metadata", "metadata"]);
    const world = await createWorld();
    dnsAnswers.set("nat64.attacker.test", ["64:ff9b::169.254.169.254"]);
    process.env.OUTBOUND_ALLOWED_HOSTS = "nat64.attacker.test";
    const result = await setWebhookApproved(world, {
      url: "http://nat64.attacker.test/latest/meta-data/",
      secret: "whsec_0123456789abcdef",
    });
    expect(result).toEqual({
      ok: false,
      code: "outbound.forbidden-address",
      message: expect.stringContaining("resolves to 64:ff9b::169.254.169.254, which is a cloud metadata address"),
    });
    expect(await webhookState(world.tenantId)).toEqual({ url: null, audits: 0 });
  });

  it("refuses a plain http webhook in production, when saved and again when sent, and keeps https", async () => {
    const { received, server, port } = await recordingServer();
    try {
      const world = await createWorld();
      dnsAnswers.set("hooks.receiver.test", ["203.0.113.10"]);
      (process.env as Record<string, string>).NODE_ENV = "production";
      expect(
        await setWebhookApproved(world, { url: "http://hooks.receiver.test/hook", secret: "whsec_0123456789abcdef" }),
      ).toEqual({
        ok: false,
        code: "outbound.plain-http",
        message: expect.stringMatching(/plain http is refused in production.*Use its https:\/\/ address\.$/),
      });
      expect(await webhookState(world.tenantId)).toEqual({ url: null, audits: 0 });
      expect(
        await setWebhookApproved(world, { url: "https://hooks.receiver.test/hook", secret: "whsec_0123456789abcdef" }),
      ).toEqual({ ok: true, held: null });
      // A plain http URL already stored (saved before this rule, or written past it) is not sent to either.
      process.env.OUTBOUND_ALLOWED_HOSTS = `127.0.0.1:${port}`;
      await db.tenant.update({
        where: { id: world.tenantId },
        data: { webhookUrl: encryptSecret(`http://127.0.0.1:${port}/hook`, webhookUrlContext(world.tenantId)) },
        select: { id: true },
      });
      await expectSendRefused(world, received, /plain http is refused in production/);
    } finally {
      server.close();
    }
  });

  it("lets the operator allow a listed host, but never a metadata address, and says so when a name does not resolve", async () => {
    const world = await createWorld();
    process.env.OUTBOUND_ALLOWED_HOSTS = "127.0.0.1:8080, 169.254.169.254";
    const saved = (url: string) => setWebhookApproved(world, { url, secret: "whsec_0123456789abcdef" });
    expect(await saved("http://127.0.0.1:8081/")).toMatchObject({ ok: false, code: "outbound.forbidden-address" });
    expect(await saved("http://169.254.169.254/")).toMatchObject({ ok: false, code: "outbound.forbidden-address" });
    expect(await saved("http://nowhere.invalid/")).toMatchObject({ ok: false, code: "outbound.unresolvable" });
    expect(await webhookState(world.tenantId)).toEqual({ url: null, audits: 0 });
    expect(await saved("http://127.0.0.1:8080/hook")).toEqual({ ok: true, held: null });
    expect(await webhookState(world.tenantId)).toMatchObject({ audits: 1 });
  });

  it("stops waiting for a name whose name server never answers after 5 s, saying so and storing nothing", async () => {
    const world = await createWorld();
    dnsAnswers.set("silent.example", ["silent"]);
    const started = Date.now();
    expect(
      await setWebhookApproved(world, { url: "https://silent.example/hook", secret: "whsec_0123456789abcdef" }),
    ).toMatchObject({
      ok: false,
      code: "outbound.unresolvable",
      message: expect.stringContaining("silent.example did not resolve within 5 s"),
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await webhookState(world.tenantId)).toEqual({ url: null, audits: 0 });
  }, 15_000);

  it("runs at most two lookups at once, so silent name servers hold no more of the threads password hashing needs; the rest are refused in words within 5 s", async () => {
    const worlds = await Promise.all([createWorld(), createWorld(), createWorld()]);
    lookups.most = 0;
    const started = Date.now();
    const saves = await Promise.all(
      worlds.map((world, index) => {
        dnsAnswers.set(`s${index}.silent.example`, ["silent"]);
        return setWebhookApproved(world, {
          url: `https://s${index}.silent.example/hook`,
          secret: "whsec_0123456789abcdef",
        });
      }),
    );
    expect(Date.now() - started).toBeLessThan(SILENT_MS);
    for (const [index, save] of saves.entries())
      expect(save).toMatchObject({
        ok: false,
        code: "outbound.unresolvable",
        message: expect.stringContaining(`s${index}.silent.example did not resolve within 5 s`),
      });
    expect(lookups.most).toBe(2);
    // Once the resolver gives up on them, their places are free again: a name that answers resolves.
    await new Promise((resolve) => setTimeout(resolve, SILENT_MS - (Date.now() - started) + 200));
    dnsAnswers.set("answers.example", ["203.0.113.10"]);
    expect(
      await setWebhookApproved(worlds[0], { url: "https://answers.example/hook", secret: "whsec_0123456789abcdef" }),
    ).toEqual({ ok: true, held: null });
  }, 20_000);

  it("refuses a send whose name now resolves to loopback (DNS rebinding) and records why, reaching nothing", async () => {
    const { received, server, port } = await recordingServer();
    try {
      const world = await createWorld();
      dnsAnswers.set("hooks.attacker.test", ["203.0.113.10"]);
      expect(
        await setWebhookApproved(world, {
          url: `http://hooks.attacker.test:${port}/hook`,
          secret: "whsec_0123456789abcdef",
        }),
      ).toEqual({ ok: true, held: null });
      dnsAnswers.set("hooks.attacker.test", ["127.0.0.1"]);
      await expectSendRefused(world, received, "hooks.attacker.test resolves to 127.0.0.1");
    } finally {
      server.close();
    }
  });

  it("refuses a send to a loopback address written straight into the database, past the save check", async () => {
    const { received, server, port } = await recordingServer();
    try {
      const world = await createWorld();
      await db.tenant.update({
        where: { id: world.tenantId },
        data: {
          webhookUrl: encryptSecret(`http://127.0.0.1:${port}/hook`, webhookUrlContext(world.tenantId)),
          webhookSecret: encryptSecret("whsec_0123456789abcdef", webhookSecretContext(world.tenantId)),
        },
        select: { id: true },
      });
      await expectSendRefused(world, received, "127.0.0.1 is a loopback, private or link-local address");
    } finally {
      server.close();
    }
  });

  it("does not follow a redirect from an allowed webhook to an internal address", async () => {
    const internal: string[] = [];
    const target = await listen((request, response) => {
      internal.push(request.url ?? "");
      response.end("secret");
    });
    const hook = await listen((_request, response) => {
      response.writeHead(302, { location: `http://127.0.0.1:${target.port}/admin` }).end();
    });
    try {
      process.env.OUTBOUND_ALLOWED_HOSTS = `127.0.0.1:${hook.port}`;
      const world = await createWorld();
      const saved = await setWebhookApproved(world, {
        url: `http://127.0.0.1:${hook.port}/hook`,
        secret: "whsec_0123456789abcdef",
      });
      expect(saved).toEqual({ ok: true, held: null });
      const row = await queueAndSend(world);
      expect(internal).toEqual([]);
      expect(row.status).not.toBe("sent");
      expect(row.lastError).toBe("webhook answered 302");
    } finally {
      hook.server.close();
      target.server.close();
    }
  });
});

describe("outboundFetch", () => {
  it("classifies addresses as metadata, internal or public", () => {
    expect(["169.254.169.254", "::ffff:a9fe:a9fe"].map(classifyAddress)).toEqual(["metadata", "metadata"]);
    expect(["127.0.0.2", "::1", "fe80::1", "100.64.0.1", "0.0.0.0", "::"].map(classifyAddress)).toEqual(
      Array(6).fill("internal"),
    );
    expect(["203.0.113.10", "2001:db8::1", "8.8.8.8"].map(classifyAddress)).toEqual(Array(3).fill("public"));
  });

  it("stops reading an answer larger than its limit and refuses credentials in the URL", async () => {
    const { server, port } = await listen((_request, response) => response.end("x".repeat(10_000)));
    try {
      process.env.OUTBOUND_ALLOWED_HOSTS = `127.0.0.1:${port}`;
      await expect(outboundFetch(`http://127.0.0.1:${port}/`, { maxBytes: 1000 })).rejects.toThrow(/larger than 1000/);
      expect((await outboundFetch(`http://127.0.0.1:${port}/`)).body.length).toBe(10_000);
      await expect(outboundFetch(`http://user:pw@127.0.0.1:${port}/`)).rejects.toBeInstanceOf(OutboundRefused);
    } finally {
      server.close();
    }
  });
});
