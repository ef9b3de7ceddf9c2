import type { Scope } from "../../tools/types";

/** What each scope lets a connection do, in the words the consent page and the admin page use. */
export const SCOPE_WORDS: Record<Scope, string> = {
  "orders:read": "Read orders and their customers",
  "orders:write": "Change orders (shipping addresses)",
  "email:send": "Send order status emails to customers",
  "refunds:write": "Propose refunds (large ones wait for a supervisor)",
};

export const ALL_SCOPES = Object.keys(SCOPE_WORDS) as Scope[];
