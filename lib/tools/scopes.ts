import type { Scope } from "./types";

export interface AgentPermissions {
  role: string;
  canRefund: boolean;
  active: boolean;
}

/** The permissions as read through an outer join: null when the person's row is missing. */
export function permissionsFrom(row: {
  role: string | null;
  canRefund: boolean | null;
  active: boolean | null;
}): AgentPermissions | null {
  return row.role === null ? null : { role: row.role, canRefund: row.canRefund === true, active: row.active === true };
}

/** The scopes a person may hold, from their current permissions only; requests can narrow, never widen. */
export function scopesFor(user: AgentPermissions): Scope[] {
  if (!user.active || user.role !== "AGENT") return [];
  const scopes: Scope[] = ["orders:read", "orders:write", "email:send"];
  if (user.canRefund) scopes.push("refunds:write");
  return scopes;
}
