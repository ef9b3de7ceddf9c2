import { randomBytes } from "node:crypto";
import { z } from "zod";
import { issuerOf, mcpResourceOf } from "../../auth/keys/access-tokens";
import type { SessionUser } from "../../auth/sign-in/auth";
import { consumeStepUpFor, type StepUpHolder } from "../../auth/step-up/step-up";
import { appendAuditLog } from "../../audit/sql";
import { canonicalJson, sha256Hex } from "../../canonical";
import { db, transaction } from "../../db";
import { newId } from "../../ids";
import { queueMessages } from "../../db/outbox";
import { scopesFor } from "../../tools/scopes";
import type { Scope } from "../../tools/types";
import { ALL_SCOPES } from "./authorize-scopes";
import { resolveClient, type DocumentFetcher } from "../clients/clients";
import { redirectUriMatches } from "../clients/redirects";
import { delegationMail } from "./delegation-mail";
import { findConsentingAgent, findTenantAdmins, insertCode, insertConnectionKey, insertGrant } from "./sql";
import type { ClientRow } from "../clients/sql";

// The authorization endpoint (OAuth 2.1 §4.1.1 with PKCE S256 and RFC 8707 resource indicators): the request is
// checked, a signed-in agent sees the consent page, and a grant issues a single-use code for the redirect URI.

export const CODE_SECONDS = 60;

const AuthorizationRequestSchema = z.object({
  response_type: z.string().max(50).optional(),
  client_id: z.string().max(2000).optional(),
  redirect_uri: z.string().max(2000).optional(),
  code_challenge: z.string().max(200).optional(),
  code_challenge_method: z.string().max(20).optional(),
  state: z.string().max(1000).optional(),
  scope: z.string().max(1000).optional(),
  resource: z.string().max(2000).optional(),
});

export interface AuthorizationRequest {
  client: ClientRow;
  redirectUri: string;
  codeChallenge: string;
  state: string | undefined;
  /** The scopes asked for, known ones only; all of them when the client asked for none. */
  requestedScopes: Scope[];
}

/**
 * A request that cannot say where to send its answer (unknown client, redirect URI not registered) is shown as a
 * page and never redirected; any other fault goes back to the client's redirect URI as `error` (RFC 6749 §4.1.2.1),
 * including a metadata document that cannot be used, when the redirect URI is one that document lists.
 */
export type CheckedRequest =
  | { ok: true; request: AuthorizationRequest }
  | { ok: false; redirect: null; message: string }
  | { ok: false; redirect: string; error: string; message: string };

const PKCE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** The redirect URI with the answer's parameters and this server's `iss` (RFC 9207). */
export function answerUrl(redirectUri: string, issuer: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  url.searchParams.set("iss", issuer);
  return url.href;
}

/** The request as the consent page shows it to the signed-in person `userId` (metadata fetches count against them). */
export async function checkAuthorizationRequest(
  raw: Record<string, string | undefined>,
  issuer: string,
  fetcher: DocumentFetcher,
  userId: string,
): Promise<CheckedRequest> {
  const parsed = AuthorizationRequestSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, redirect: null, message: "The request's parameters are too long." };
  const input = parsed.data;
  if (!input.client_id) return { ok: false, redirect: null, message: "The request names no client (client_id)." };
  const lookup = await resolveClient(input.client_id, fetcher, userId);
  const registered = lookup.ok ? lookup.client.redirectUris : (lookup.returnTo ?? []);
  const redirectUri = input.redirect_uri ?? (registered.length === 1 ? registered[0] : undefined);
  const returnsToClient = redirectUri !== undefined && redirectUriMatches(registered, redirectUri);
  const fail = (error: string, message: string): CheckedRequest => ({
    ok: false,
    redirect: answerUrl(redirectUri!, issuer, { error, error_description: message, state: input.state }),
    error,
    message,
  });
  if (!lookup.ok)
    return returnsToClient
      ? fail("unauthorized_client", `this client cannot be used: ${lookup.reason}`)
      : { ok: false, redirect: null, message: `This client cannot be used: ${lookup.reason}.` };
  const client = lookup.client;
  if (!returnsToClient)
    return {
      ok: false,
      redirect: null,
      message: "The address this client asked to return to is not one it registered, so nothing was sent there.",
    };
  if (input.response_type !== "code") return fail("unsupported_response_type", "only response_type=code is supported");
  if (input.code_challenge_method !== "S256" || !input.code_challenge || !PKCE_CHALLENGE.test(input.code_challenge))
    return fail("invalid_request", "PKCE is required: code_challenge (S256, base64url) and code_challenge_method=S256");
  if (input.resource !== undefined && input.resource !== mcpResourceOf(issuer))
    return fail("invalid_target", `this server issues tokens only for ${mcpResourceOf(issuer)}`);
  const asked = (input.scope ?? "").split(" ").filter(Boolean);
  const known = ALL_SCOPES.filter((scope) => asked.includes(scope));
  if (asked.length > 0 && known.length === 0)
    return fail("invalid_scope", `none of the requested scopes is offered; offered: ${ALL_SCOPES.join(" ")}`);
  return {
    ok: true,
    request: {
      client,
      redirectUri,
      codeChallenge: input.code_challenge,
      state: input.state,
      requestedScopes: known.length > 0 ? known : ALL_SCOPES,
    },
  };
}

/** The signed-in person as the consent page shows them, with the scopes they can pass on. */
export async function consentingAgent(user: SessionUser) {
  const agent = await findConsentingAgent(db, user.id, user.tenantId);
  if (!agent) return null;
  return { ...agent, scopes: scopesFor(agent) };
}

export type Decision =
  { ok: true; location: string } | { ok: false; status: 400 | 403; message: string; location?: undefined };

/** The scope that delegates the person's refund permission: granting it takes a fresh step-up proof (decision 014). */
export const DELEGATED_SCOPE: Scope = "refunds:write";

/** What the consent's step-up proof covers: this client's one authorization request (its PKCE challenge). */
export const delegationDigest = (clientId: string, codeChallenge: string) =>
  sha256Hex(canonicalJson({ clientId, codeChallenge }));

/**
 * The person's answer. Everything is checked again (the form's fields are the client's request as the page
 * showed it); a grant is a new connection: its key row, the grant with the chosen scopes (only those the agent
 * holds and the client asked for), a code, and an audit entry, in one transaction. `refunds:write` passes the
 * person's refund permission on: it is granted only with a fresh step-up proof for this request, consumed in that
 * transaction, and the person and the tenant's admins are emailed, as for a new key.
 */
export async function decideAuthorization(
  request: Request,
  user: SessionUser,
  form: Record<string, string | undefined>,
  chosenScopes: string[],
  fetcher: DocumentFetcher,
  holder: StepUpHolder,
): Promise<Decision> {
  const issuer = issuerOf(request);
  const checked = await checkAuthorizationRequest(form, issuer, fetcher, user.id);
  if (!checked.ok) {
    return checked.redirect === null
      ? { ok: false, status: 400, message: checked.message }
      : { ok: true, location: checked.redirect };
  }
  const { client, redirectUri, codeChallenge, state, requestedScopes } = checked.request;
  if (form.decision !== "grant")
    return {
      ok: true,
      location: answerUrl(redirectUri, issuer, {
        error: "access_denied",
        error_description: "the person refused",
        state,
      }),
    };
  const agent = await consentingAgent(user);
  if (!agent || agent.role !== "AGENT" || agent.scopes.length === 0)
    return { ok: false, status: 403, message: "Only an active agent can connect a client to act as them." };
  if (client.kind === "dcr" && !agent.dcrEnabled)
    return {
      ok: false,
      status: 403,
      message: "Your admin has not allowed clients that register themselves. Ask them to turn it on.",
    };
  const chosen = agent.scopes.filter((scope) => requestedScopes.includes(scope) && chosenScopes.includes(scope));
  if (chosen.length === 0) return { ok: false, status: 400, message: "Choose at least one thing the client may do." };

  const code = randomBytes(32).toString("base64url");
  const grantId = newId("grant");
  const keyId = newId("key");
  const granted = await transaction(async (tx) => {
    const stepUp = chosen.includes(DELEGATED_SCOPE)
      ? await consumeStepUpFor(tx, holder, {
          kind: "oauth.refunds-delegated",
          digest: delegationDigest(client.id, codeChallenge),
        })
      : null;
    // Without a fresh proof the client gets everything chosen but the refund permission.
    const scopes = stepUp ? chosen : chosen.filter((scope) => scope !== DELEGATED_SCOPE);
    if (scopes.length === 0) return null;
    await insertConnectionKey(tx, {
      id: keyId,
      tenantId: user.tenantId,
      userId: user.id,
      hash: sha256Hex(`oauth:${randomBytes(32).toString("base64url")}`),
    });
    await insertGrant(tx, {
      id: grantId,
      tenantId: user.tenantId,
      agentId: user.id,
      clientId: client.id,
      apiKeyId: keyId,
      scopes,
      redirectUri,
      grantedById: user.id,
    });
    await insertCode(tx, {
      hash: sha256Hex(code),
      grantId,
      codeChallenge,
      expiresAt: new Date(Date.now() + CODE_SECONDS * 1000),
    });
    await appendAuditLog(tx, {
      tenantId: user.tenantId,
      actorId: user.id,
      action: "oauth.granted",
      detail: {
        grantId,
        clientId: client.id,
        clientName: client.name,
        kind: client.kind,
        redirectUri,
        scopes,
        ...(stepUp ? { stepUp } : {}),
      },
    });
    if (stepUp) {
      const recipients = [agent.email, ...(await findTenantAdmins(tx, user.tenantId))];
      await queueMessages(
        tx,
        { tenantId: user.tenantId, orderId: null, toolCallId: null },
        delegationMail([...new Set(recipients)], { agent, client, grantId }),
      );
    }
    return scopes;
  });
  if (!granted)
    return {
      ok: false,
      status: 403,
      message: "Proposing refunds needs your passkey or password on this page. Confirm it is you and allow again.",
    };
  return { ok: true, location: answerUrl(redirectUri, issuer, { code, state }) };
}
