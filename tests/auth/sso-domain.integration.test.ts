import { randomBytes } from "node:crypto";
import { NextRequest } from "next/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as ssoStartRoute } from "@/app/api/sso/start/route";
import { setSso } from "@/lib/admin/access/sso";
import { applyDueChanges } from "@/lib/admin/changes/two-admin";
import type { SsoSettingsInput } from "@/lib/auth/sso/settings";
import { findSsoByTenant } from "@/lib/auth/sso/sql";
import { hashPassword } from "@/lib/auth/password-hash";
import { db } from "@/lib/db";
import { encryptSecret } from "@/lib/security/secrets";
import { approveAs } from "../support/admin-changes";
import { startProviderForApp, type TestProvider } from "../support/oidc-provider";
import { provedFor } from "../support/step-up";

// Whose email domain a tenant's single sign-on may take (docs/SPEC.md, "Single sign-on"): never one another tenant
// signs in by, has a change waiting for, or has people at; and a held change whose domain another tenant took
// meanwhile ends superseded, saying why, without stopping the delay job for anyone else.

const APP = "http://toolgate.test";
let provider: TestProvider;
const suffix = randomBytes(4).toString("hex");
let passwordHash = "";

beforeAll(async () => {
  provider = await startProviderForApp(APP, "sso-domain-tests-only-secret");
  passwordHash = await hashPassword("a-long-enough-password-1");
});

afterAll(async () => provider?.close());

/** A tenant with its admins (two: held changes wait for the second; one: they apply after the delay). */
async function tenant(name: string, admins: 1 | 2 = 1) {
  const tenantId = `t_ssod_${name}_${suffix}`;
  await db.tenant.create({ data: { id: tenantId, name: tenantId } });
  const ids = Array.from({ length: admins }, (_, index) => `usr_ssod_${name}${index}_${suffix}`);
  await db.user.createMany({
    data: ids.map((id) => ({
      id,
      tenantId,
      email: `${id}@own-${name}-${suffix}.test`,
      name: id,
      role: "ADMIN" as const,
      passwordHash,
    })),
  });
  return { tenantId, admin: { id: ids[0], tenantId }, second: ids[1] ? { id: ids[1], tenantId } : null };
}

const settings = (emailDomain: string): SsoSettingsInput => ({
  displayName: "Corp ID",
  issuer: provider.issuer,
  clientId: provider.clientId,
  clientSecret: provider.clientSecret,
  emailDomain,
  groupsClaim: "",
  roleMap: [],
  required: false,
});

/** The admin's save, with a step-up made for exactly this issuer and domain. */
async function save(admin: { id: string; tenantId: string }, emailDomain: string) {
  const proof = await provedFor(admin.id, { kind: "admin.sso", issuer: provider.issuer, emailDomain });
  return setSso(admin, settings(emailDomain), proof);
}

const heldId = (saved: Awaited<ReturnType<typeof save>>) => (saved as { held: { id: string } }).held.id;
const statusOf = async (id: string) => (await db.adminChange.findUniqueOrThrow({ where: { id } })).status;
const dueNow = (id: string, ago: number) =>
  db.adminChange.update({ where: { id }, data: { applyAt: new Date(Date.now() - ago) } });
const supersededBecause = (tenantId: string, changeId: string) =>
  db.auditLog.findMany({
    where: { tenantId, action: "change.superseded", detail: { path: ["changeId"], equals: changeId } },
    select: { detail: true },
  });

/** A tenant's settings for a domain, as an applied change leaves them. */
const settingsOf = (tenantId: string, emailDomain: string) =>
  db.tenantSso.create({
    data: {
      tenantId,
      displayName: "Taken",
      issuer: provider.issuer,
      clientId: provider.clientId,
      clientSecret: encryptSecret(provider.clientSecret, `TenantSso.clientSecret:${tenantId}`),
      emailDomain,
    },
  });

describe("an email domain claimed by single sign-on", () => {
  it("refuses the domain of another tenant's people; their sign-in by email is never sent to the claimant's provider", async () => {
    const a = await tenant("squatter");
    const b = await tenant("owner");
    const domain = `owner-${suffix}.test`;
    await db.user.create({
      data: {
        id: `usr_ssod_bob_${suffix}`,
        tenantId: b.tenantId,
        email: `bob@${domain}`,
        name: "Bob",
        role: "SUPERVISOR",
        passwordHash,
      },
    });
    const proofs = () => db.stepUpProof.count({ where: { userId: a.admin.id, usedFor: { isEmpty: true } } });

    const refused = await save(a.admin, domain);
    expect(refused).toMatchObject({ ok: false, code: "sso.domain-in-use" });
    expect((refused as { message: string }).message).toContain(
      `People of another tenant have email addresses at ${domain}`,
    );
    expect(await proofs()).toBe(1);
    expect(await db.adminChange.count({ where: { tenantId: a.tenantId } })).toBe(0);
    expect(await findSsoByTenant(db, a.tenantId)).toBeNull();

    const start = await ssoStartRoute(
      new NextRequest(`${APP}/api/sso/start?email=${encodeURIComponent(`bob@${domain}`)}&next=/approvals`),
    );
    expect(start.headers.get("location")!.startsWith(provider.issuer)).toBe(false);

    // The tenant whose people they are may take it.
    expect(await save(b.admin, domain)).toMatchObject({ ok: true, held: { mode: "delay" } });
  });

  it("refuses a domain another tenant has a change waiting for, and answers two tenants saving one domain at once one after the other", async () => {
    const first = await tenant("first");
    const second = await tenant("second");
    const waiting = `waiting-${suffix}.test`;
    expect(await save(first.admin, waiting)).toMatchObject({ ok: true, held: { mode: "delay" } });
    expect(await save(second.admin, waiting)).toMatchObject({ ok: false, code: "sso.domain-taken" });

    const racers = [await tenant("racer1"), await tenant("racer2"), await tenant("racer3")];
    const raced = `raced-${suffix}.test`;
    const proofs = await Promise.all(
      racers.map(({ admin }) =>
        provedFor(admin.id, { kind: "admin.sso", issuer: provider.issuer, emailDomain: raced }),
      ),
    );
    const answers = await Promise.all(racers.map(({ admin }, index) => setSso(admin, settings(raced), proofs[index])));
    expect(answers.filter((answer) => answer.ok)).toHaveLength(1);
    expect(answers.filter((answer) => !answer.ok)).toEqual([
      expect.objectContaining({ code: "sso.domain-taken" }),
      expect.objectContaining({ code: "sso.domain-taken" }),
    ]);
    expect(
      await db.adminChange.count({
        where: { kind: "sso", status: "pending", change: { path: ["emailDomain"], equals: raced } },
      }),
    ).toBe(1);
  });
});

describe("a held change whose domain another tenant took meanwhile", () => {
  it("ends superseded with why when its delay passes, and the job goes on to other tenants' changes and the expiry", async () => {
    const a = await tenant("late");
    const c = await tenant("bystander");
    const e = await tenant("expiring", 2);
    const contested = `contested-${suffix}.test`;
    const heldA = heldId(await save(a.admin, contested));
    const heldC = heldId(await save(c.admin, `bystander-${suffix}.test`));
    const heldE = heldId(await save(e.admin, `expiring-${suffix}.test`));
    // Another tenant's settings for the domain, applied while A's change waited.
    const b = await tenant("taker");
    await settingsOf(b.tenantId, contested);
    await dueNow(heldA, 120_000);
    await dueNow(heldC, 60_000);
    await db.adminChange.update({ where: { id: heldE }, data: { expiresAt: new Date(Date.now() - 1000) } });

    // Other files' due changes may apply in the same run: the count is at least C's.
    expect(await applyDueChanges()).toBeGreaterThanOrEqual(1);
    expect(await statusOf(heldA)).toBe("superseded");
    expect(await findSsoByTenant(db, a.tenantId)).toBeNull();
    expect(await supersededBecause(a.tenantId, heldA)).toEqual([
      { detail: { changeId: heldA, kind: "sso", reason: "sso.domain-taken" } },
    ]);
    expect(await statusOf(heldC)).toBe("applied");
    expect(await findSsoByTenant(db, c.tenantId)).toMatchObject({ emailDomain: `bystander-${suffix}.test` });
    expect(await statusOf(heldE)).toBe("expired");
    expect(await findSsoByTenant(db, b.tenantId)).toMatchObject({ emailDomain: contested });
  });

  it("answers the second admin change.stale saying why, once another tenant's people are at the domain", async () => {
    const a = await tenant("approved", 2);
    const domain = `peopled-${suffix}.test`;
    const held = heldId(await save(a.admin, domain));
    const b = await tenant("peopled");
    await db.user.create({
      data: {
        id: `usr_ssod_carl_${suffix}`,
        tenantId: b.tenantId,
        email: `carl@${domain}`,
        name: "Carl",
        role: "SUPERVISOR",
        passwordHash,
      },
    });
    const { digest } = await db.adminChange.findUniqueOrThrow({ where: { id: held } });
    const answer = await approveAs(a.second!, { id: held, digest });
    expect(answer).toMatchObject({ ok: false, code: "change.stale" });
    expect((answer as { message: string }).message).toContain("People of another tenant");
    expect(await statusOf(held)).toBe("superseded");
    expect(await findSsoByTenant(db, a.tenantId)).toBeNull();
    expect(await supersededBecause(a.tenantId, held)).toEqual([
      { detail: { changeId: held, kind: "sso", reason: "sso.domain-in-use" } },
    ]);
  });

  it("a change whose applying fails unexpectedly is logged and left for the next run; the others still apply", async () => {
    const broken = await tenant("broken");
    const after = await tenant("after");
    const heldBroken = heldId(await save(broken.admin, `broken-${suffix}.test`));
    const heldAfter = heldId(await save(after.admin, `after-${suffix}.test`));
    // A stored change the settings' columns refuse (no button name): its transaction fails.
    const row = await db.adminChange.findUniqueOrThrow({ where: { id: heldBroken } });
    const change = { ...(row.change as Record<string, unknown>) };
    delete change.displayName;
    await db.adminChange.update({ where: { id: heldBroken }, data: { change: change as object } });
    try {
      await dueNow(heldBroken, 120_000);
      await dueNow(heldAfter, 60_000);

      expect(await applyDueChanges()).toBeGreaterThanOrEqual(1);
      expect(await statusOf(heldBroken)).toBe("pending");
      expect(await findSsoByTenant(db, broken.tenantId)).toBeNull();
      expect(await statusOf(heldAfter)).toBe("applied");
      await applyDueChanges();
      expect(await statusOf(heldBroken)).toBe("pending");
    } finally {
      // Never left for other runs of the job on this database (another file's, or a later suite's instances),
      // even when an assertion above failed.
      await db.adminChange.update({ where: { id: heldBroken }, data: { status: "cancelled" } });
    }
  });
});
