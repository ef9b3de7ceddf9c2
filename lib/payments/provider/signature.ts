import { createHmac } from "node:crypto";
import { sameSecret } from "../../security/equal";

// The provider signs every answer with the shared secret over its status and body, so an answer that did not
// come from the provider (a proxy's error page, a load balancer's 4xx, a rewritten status) cannot pass for one.
export const SIGNATURE_HEADER = "provider-signature";

export function signAnswer(secret: string, status: number, body: string): string {
  return `v1=${createHmac("sha256", secret).update(`${status}.${body}`).digest("hex")}`;
}

export function verifyAnswer(secret: string, status: number, body: string, signature: string | undefined): boolean {
  if (!signature) return false;
  return sameSecret(signature, signAnswer(secret, status, body));
}
