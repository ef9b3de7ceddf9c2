import { describe, expect, it, vi } from "vitest";
import { db } from "@/lib/db";
import { agentSession } from "../support/oauth-grant";
import { signedIn } from "../support/signed-in";
import { sessionOf } from "../support/step-up";
import { createWorld } from "../support/world";

vi.mock("@/lib/auth/sign-in/auth", async () => (await import("../support/signed-in")).signedInMock());
vi.mock("next/cache", () => ({ revalidatePath: () => undefined }));
const { compareVersionsAction, rollbackRulesAction } = await import("@/lib/admin/rules/actions");

// The rules page's actions as the browser calls them: a version number no version can have is refused as input,
// never passed on to a query that fails.

describe("the rules page's actions", () => {
  it("a version number beyond what the database stores is an input error, and nothing is written", async () => {
    const world = await createWorld();
    signedIn.user = { ...agentSession(world, world.users.admin), role: "ADMIN" };
    signedIn.sessionId = await sessionOf(world.users.admin);
    const huge = 3_000_000_000;
    expect(await rollbackRulesAction({ version: huge })).toMatchObject({ ok: false, code: "input.invalid" });
    expect(await compareVersionsAction({ from: 1, to: huge })).toMatchObject({ ok: false, code: "input.invalid" });
    // The largest version the database holds is a plain "no such version".
    expect(await rollbackRulesAction({ version: 2_147_483_647 })).toMatchObject({ ok: false, code: "not-found" });
    expect(await db.policyRuleSet.count({ where: { tenantId: world.tenantId } })).toBe(0);
    expect(await db.adminChange.count({ where: { tenantId: world.tenantId } })).toBe(0);
  });
});
