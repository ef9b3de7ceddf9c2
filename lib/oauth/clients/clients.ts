import { randomBytes } from "node:crypto";
import { z } from "zod";
import { sha256Hex } from "../../canonical";
import { db } from "../../db";
import { newId } from "../../ids";
import { logInfo } from "../../observe/log";
import { acceptableRedirectUri } from "./redirects";
import {
  countMetadataFetch,
  countRecentRegistrations,
  findClient,
  insertRegisteredClient,
  upsertMetadataClient,
  type ClientRow,
} from "./sql";

// Who a client is (decision 017): a Client ID Metadata Document at the HTTPS URL that is its client_id, fetched
// through the outbound guard and cached; or a client that registered itself (RFC 7591).

/** Fetches a document for us: one GET, no redirects, refusing internal addresses, within the size and time limits. */
export type DocumentFetcher = (
  url: URL,
  limits: { maxBytes: number; timeoutMs: number },
) => Promise<
  | { ok: true; status: number; contentType: string; body: string; maxAgeSeconds?: number }
  | { ok: false; reason: string }
>;

export const METADATA_LIMITS = { maxBytes: 16 * 1024, timeoutMs: 5000 } as const;
/** A document is kept as long as its cache headers say, within these bounds; an hour when they say nothing. */
export const CACHE_SECONDS = { min: 60, max: 24 * 3600, unsaid: 3600 } as const;
/**
 * Fetches a minute, per person and per host: a signed-in person chooses the URL, so without a limit the consent
 * page would be a way to make this server probe any host, as often as they like.
 */
export const METADATA_FETCH_LIMITS = { perPerson: 10, perHost: 30 } as const;
// What the person is told of any failure: whether the host refused, timed out, failed TLS or answered something
// else is what a scan would want to learn, so the detail goes to the log only.
const UNUSABLE_DOCUMENT = "its metadata document could not be fetched, or is not a valid client metadata document";

const ClientNameSchema = z.string().trim().min(1).max(100);
const RedirectUrisSchema = z
  .array(z.string().max(2000))
  .min(1)
  .max(20)
  .refine(
    (uris) => uris.every(acceptableRedirectUri),
    "each redirect URI must be https, loopback http or an app scheme",
  );
const OptionalUrlSchema = z
  .string()
  .max(2000)
  .refine((value) => /^https:\/\//.test(value))
  .optional();

/** What a document must hold before anything is sent back to it: its own client_id and where it returns to. */
const MetadataIdentitySchema = z.looseObject({ client_id: z.string(), redirect_uris: RedirectUrisSchema });

const MetadataDocumentSchema = z.looseObject({
  client_name: ClientNameSchema.optional(),
  client_uri: OptionalUrlSchema,
  token_endpoint_auth_method: z.string().max(100).optional(),
  jwks_uri: z.string().max(2000).optional(),
  grant_types: z.array(z.string().max(200)).max(20).optional(),
  response_types: z.array(z.string().max(100)).max(20).optional(),
  client_secret: z.never().optional(),
  client_secret_expires_at: z.never().optional(),
});
type MetadataDocument = z.infer<typeof MetadataDocumentSchema>;

/**
 * How a metadata document's client authenticates at the token endpoint, or why it cannot be used. A document is
 * public, so it can hold no secret: `none` (PKCE) or `private_key_jwt` with the `jwks_uri` of its public keys.
 */
function documentAuthentication(
  document: MetadataDocument,
): { ok: true; method: "none" | "private_key_jwt"; jwksUri: string | null } | { ok: false; reason: string } {
  const method = document.token_endpoint_auth_method ?? "none";
  if (method === "none") return { ok: true, method, jwksUri: null };
  if (method !== "private_key_jwt")
    return {
      ok: false,
      reason: `its token_endpoint_auth_method ${method} is not one a metadata document can use (none or private_key_jwt)`,
    };
  if (!document.jwks_uri?.startsWith("https://") || !URL.canParse(document.jwks_uri))
    return { ok: false, reason: "it names private_key_jwt but no https jwks_uri for its keys" };
  return { ok: true, method, jwksUri: document.jwks_uri };
}

/**
 * Why a document's grant and response types leave it no way to use this server, or null when they do not. Types
 * this server does not offer (Claude's jwt-bearer, VS Code's device_code) are ignored, never a reason to refuse.
 */
function unusableFlow(document: MetadataDocument): string | null {
  if (!(document.grant_types ?? ["authorization_code"]).includes("authorization_code"))
    return "its grant_types do not include authorization_code";
  if (document.response_types && !document.response_types.includes("code"))
    return "its response_types do not include code";
  return null;
}

/**
 * Whether a client_id is a metadata document URL we may fetch (draft-ietf-oauth-client-id-metadata-document §3):
 * https, a path, no fragment, no credentials, no dot segments.
 */
export function isMetadataUrl(clientId: string): boolean {
  if (!clientId.startsWith("https://") || clientId.length > 2000) return false;
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return false;
  }
  if (url.hash || clientId.includes("#") || url.username || url.password) return false;
  if (url.pathname === "/" || /\/\.{1,2}(\/|$)/.test(clientId.slice(url.origin.length))) return false;
  return url.href === clientId;
}

/**
 * A client, or why not. `returnTo` is set when a fetched document named this client_id and valid redirect URIs but
 * cannot be used otherwise: those URIs are the client's own, so the refusal may go back to them as an OAuth error.
 */
export type ClientLookup = { ok: true; client: ClientRow } | { ok: false; reason: string; returnTo?: string[] };

/**
 * The client named by `client_id`: a known registered client, or a metadata document fetched (or cached). A fetch
 * is counted against the limits of the person it is for (`userId`) and of its host before it is made.
 */
export async function resolveClient(clientId: string, fetcher: DocumentFetcher, userId: string): Promise<ClientLookup> {
  if (clientId.length === 0 || clientId.length > 2000) return { ok: false, reason: "unknown client" };
  if (!isMetadataUrl(clientId)) {
    const registered = await findClient(db, clientId);
    return registered?.kind === "dcr" ? { ok: true, client: registered } : { ok: false, reason: "unknown client" };
  }
  const cached = await findClient(db, clientId);
  if (cached?.cacheUntil && Date.now() < cached.cacheUntil.getTime()) return { ok: true, client: cached };
  const url = new URL(clientId);
  const counted = await countMetadataFetch(db, { userId, host: url.hostname });
  const over = counted.find(
    (row) => row.count > (row.key.startsWith("m:u:") ? METADATA_FETCH_LIMITS.perPerson : METADATA_FETCH_LIMITS.perHost),
  );
  if (over) {
    logInfo("oauth.metadata-fetch-limited", { clientId, userId, bucket: over.key });
    return {
      ok: false,
      reason: `too many client metadata documents were fetched just now; try again in ${Math.max(1, over.retryAfter)} seconds`,
    };
  }
  const document = readMetadataDocument(clientId, await fetcher(url, METADATA_LIMITS));
  if (!document.ok) {
    logInfo("oauth.metadata-document-refused", { clientId, userId, reason: document.reason });
    return { ok: false, reason: UNUSABLE_DOCUMENT, ...(document.returnTo ? { returnTo: document.returnTo } : {}) };
  }
  await upsertMetadataClient(db, document.client);
  const { id, name, redirectUris, clientUri, cacheUntil } = document.client;
  return { ok: true, client: { id, name, redirectUris, clientUri, kind: "cimd", fetchedAt: new Date(), cacheUntil } };
}

/**
 * The client a fetched document describes, or why it cannot be used (for the log: it can say what a scan wants).
 * `returnTo` as in `ClientLookup`.
 */
function readMetadataDocument(
  clientId: string,
  fetched: Awaited<ReturnType<DocumentFetcher>>,
):
  | { ok: true; client: Parameters<typeof upsertMetadataClient>[1] }
  | { ok: false; reason: string; returnTo?: string[] } {
  if (!fetched.ok) return { ok: false, reason: `could not be fetched: ${fetched.reason}` };
  if (fetched.status !== 200) return { ok: false, reason: `answered ${fetched.status}` };
  let json: unknown;
  try {
    json = JSON.parse(fetched.body);
  } catch {
    return { ok: false, reason: "not JSON" };
  }
  const identity = MetadataIdentitySchema.safeParse(json);
  if (!identity.success) return { ok: false, reason: `not acceptable: ${issues(identity.error)}` };
  if (identity.data.client_id !== clientId) return { ok: false, reason: "names another client_id" };
  const returnTo = identity.data.redirect_uris;
  const parsed = MetadataDocumentSchema.safeParse(json);
  if (!parsed.success) return { ok: false, reason: `not acceptable: ${issues(parsed.error)}`, returnTo };
  const authentication = documentAuthentication(parsed.data);
  if (!authentication.ok) return { ok: false, reason: `cannot be used: ${authentication.reason}`, returnTo };
  const flow = unusableFlow(parsed.data);
  if (flow) return { ok: false, reason: `cannot be used: ${flow}`, returnTo };
  const keep = Math.min(CACHE_SECONDS.max, Math.max(CACHE_SECONDS.min, fetched.maxAgeSeconds ?? CACHE_SECONDS.unsaid));
  return {
    ok: true,
    client: {
      id: clientId,
      name: parsed.data.client_name ?? new URL(clientId).hostname,
      redirectUris: returnTo,
      clientUri: parsed.data.client_uri ?? null,
      authMethod: authentication.method,
      jwksUri: authentication.jwksUri,
      cacheUntil: new Date(Date.now() + keep * 1000),
    },
  };
}

const issues = (error: z.ZodError) =>
  [...new Set(error.issues.map((issue) => issue.path.join(".") || "(document)"))].join(", ");

export const RegistrationSchema = z.looseObject({
  redirect_uris: RedirectUrisSchema,
  client_name: ClientNameSchema.optional(),
  client_uri: OptionalUrlSchema,
  token_endpoint_auth_method: z.string().max(100).optional(),
  grant_types: z.array(z.string().max(100)).max(10).optional(),
  response_types: z.array(z.string().max(100)).max(10).optional(),
});

/** Registrations allowed per address, and from everywhere, per hour. */
export const REGISTRATION_LIMITS = { perAddress: 10, all: 1000 } as const;

export type RegistrationResult =
  | { ok: true; status: 201; body: Record<string, unknown> }
  | { ok: false; status: 400 | 429; error: string; description: string };

/**
 * Registers a client (RFC 7591): a public one (`none`, PKCE), or one given a secret to send as `client_secret`
 * (`client_secret_post`, as Claude asks for), kept only as its hash. Grant and response types this server does not
 * offer are dropped. Anyone may register; a registered client can be granted only by a person of a tenant whose
 * admin allows such clients (checked at consent).
 */
export async function registerClient(input: unknown, address: string): Promise<RegistrationResult> {
  const parsed = RegistrationSchema.safeParse(input);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join(".") || "(body)"))];
    const field = fields[0] === "redirect_uris" ? "invalid_redirect_uri" : "invalid_client_metadata";
    return { ok: false, status: 400, error: field, description: `check these fields: ${fields.join(", ")}` };
  }
  const { token_endpoint_auth_method: method = "none", grant_types: grants, response_types: responses } = parsed.data;
  if (method !== "none" && method !== "client_secret_post")
    return {
      ok: false,
      status: 400,
      error: "invalid_client_metadata",
      description:
        "token_endpoint_auth_method: register with none (a public client with PKCE) or client_secret_post (a secret sent in the token request's body)",
    };
  if (grants && !grants.includes("authorization_code"))
    return {
      ok: false,
      status: 400,
      error: "invalid_client_metadata",
      description: "grant_types must include authorization_code (refresh_token is given with it)",
    };
  if (responses && !responses.includes("code"))
    return {
      ok: false,
      status: 400,
      error: "invalid_client_metadata",
      description: "response_types must include code",
    };
  const recent = await countRecentRegistrations(db, address);
  if (recent.fromAddress >= REGISTRATION_LIMITS.perAddress || recent.all >= REGISTRATION_LIMITS.all)
    return {
      ok: false,
      status: 429,
      error: "too_many_requests",
      description: "too many registrations; try again within the hour",
    };
  const id = newId("oc");
  const name = parsed.data.client_name ?? "Unnamed client";
  const secret = method === "client_secret_post" ? randomBytes(32).toString("base64url") : null;
  await insertRegisteredClient(db, {
    id,
    name,
    redirectUris: parsed.data.redirect_uris,
    clientUri: parsed.data.client_uri ?? null,
    registeredFrom: address,
    authMethod: method,
    secretHash: secret === null ? null : sha256Hex(secret),
  });
  return {
    ok: true,
    status: 201,
    body: {
      client_id: id,
      client_id_issued_at: Math.floor(Date.now() / 1000),
      ...(secret === null ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
      client_name: name,
      redirect_uris: parsed.data.redirect_uris,
      ...(parsed.data.client_uri ? { client_uri: parsed.data.client_uri } : {}),
      token_endpoint_auth_method: method,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    },
  };
}
