import type { Scope } from "./types";

export interface AgentPermissions {
  role: string;
  canRefund: boolean;
  active: boolean;
}

/** The scopes a person may hold, from their current permissions only; requests can narrow, never widen. */
export function scopesFor(user: AgentPermissions): Scope[] {
  if (!user.active || user.role !== "AGENT") return [];
  const scopes: Scope[] = ["orders:read", "orders:write", "email:send"];
  if (user.canRefund) scopes.push("refunds:write");
  return scopes;
}
