import { env } from "../env";
import { sameSecret } from "./equal";
import { clientAddress } from "./request";

// Who may read an instance's operations: its metrics, and what its readiness check found wrong.

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/**
 * Whether the request comes from an operator: `Authorization: Bearer $METRICS_TOKEN`, or loopback outside
 * production when no token is set.
 */
export function fromOperator(request: Request): boolean {
  const { METRICS_TOKEN: token, NODE_ENV } = env();
  // Production does not start without a token (instrumentation.ts); development without one answers loopback only.
  if (!token) return NODE_ENV !== "production" && LOOPBACK.test(clientAddress(request.headers));
  return sameSecret(request.headers.get("authorization") ?? "", `Bearer ${token}`);
}
