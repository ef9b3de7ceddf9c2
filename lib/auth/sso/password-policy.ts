import { db } from "../../db";
import { insertSsoAudit, ssoRequiredFor } from "./sql";

/** What `authorize` throws (and the sign-in form reads) when a tenant signs its people in through its provider only. */
export const SSO_REQUIRED = "sso-required";

/**
 * Whether a person whose password just matched may sign in with it. In a tenant that requires single sign-on only
 * an admin may, as break-glass for a provider that is down or misconfigured, and each such sign-in is audited.
 */
export async function passwordSignInAllowed(
  person: {
    id: string;
    role: string;
    tenantId: string;
  },
  address: string,
): Promise<boolean> {
  if (!(await ssoRequiredFor(db, person.tenantId))) return true;
  if (person.role !== "ADMIN") return false;
  await insertSsoAudit(db, {
    tenantId: person.tenantId,
    actorId: person.id,
    action: "sign-in.break-glass",
    detail: { address },
  });
  return true;
}
