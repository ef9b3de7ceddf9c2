import { transaction } from "../../db";
import { startSession } from "../sessions";
import { insertSsoAudit, lockPasswordSignIns, ssoRequiredFor } from "./sql";

/** What `authorize` throws (and the sign-in form reads) when a tenant signs its people in through its provider only. */
export const SSO_REQUIRED = "sso-required";

/**
 * Starts the session of a person whose password just matched, unless they may not sign in with it: in a tenant that
 * requires single sign-on only an admin may, as break-glass for a provider that is down or misconfigured, and each
 * such sign-in is audited. Returns the session's id, or null when refused. The check and the session are one
 * transaction holding the tenant's password sign-ins shared, so requiring SSO (lib/auth/sso/settings.ts), which
 * holds them alone, cannot take effect between the two and leave this session open.
 */
export async function startPasswordSession(
  person: {
    id: string;
    role: string;
    tenantId: string;
  },
  browser: { address: string; userAgent: string },
): Promise<string | null> {
  return transaction(async (tx) => {
    await lockPasswordSignIns(tx, person.tenantId, "shared");
    if (await ssoRequiredFor(tx, person.tenantId)) {
      if (person.role !== "ADMIN") return null;
      await insertSsoAudit(tx, {
        tenantId: person.tenantId,
        actorId: person.id,
        action: "sign-in.break-glass",
        detail: { address: browser.address },
      });
    }
    return startSession(person, browser, "password", tx);
  });
}
