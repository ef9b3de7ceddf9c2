import { z } from "zod";
import { db } from "../db";
import { newId } from "../ids";
import { acceptableRedirectUri } from "./redirects";
import {
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

const MetadataDocumentSchema = z.looseObject({
  client_id: z.string(),
  client_name: ClientNameSchema.optional(),
  client_uri: OptionalUrlSchema,
  redirect_uris: RedirectUrisSchema,
  token_endpoint_auth_method: z.literal("none").optional(),
  grant_types: z.array(z.enum(["authorization_code", "refresh_token"])).optional(),
  response_types: z.array(z.literal("code")).optional(),
  client_secret: z.never().optional(),
  client_secret_expires_at: z.never().optional(),
});

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

export type ClientLookup = { ok: true; client: ClientRow } | { ok: false; reason: string };

/** The client named by `client_id`: a known registered client, or a metadata document fetched (or cached). */
export async function resolveClient(clientId: string, fetcher: DocumentFetcher): Promise<ClientLookup> {
  if (clientId.length === 0 || clientId.length > 2000) return { ok: false, reason: "unknown client" };
  if (!isMetadataUrl(clientId)) {
    const registered = await findClient(db, clientId);
    return registered?.kind === "dcr" ? { ok: true, client: registered } : { ok: false, reason: "unknown client" };
  }
  const cached = await findClient(db, clientId);
  if (cached?.cacheUntil && Date.now() < cached.cacheUntil.getTime()) return { ok: true, client: cached };
  const fetched = await fetcher(new URL(clientId), METADATA_LIMITS);
  if (!fetched.ok)
    return { ok: false, reason: `the client's metadata document could not be fetched: ${fetched.reason}` };
  if (fetched.status !== 200) return { ok: false, reason: `the client's metadata document answered ${fetched.status}` };
  let json: unknown;
  try {
    json = JSON.parse(fetched.body);
  } catch {
    return { ok: false, reason: "the client's metadata document is not JSON" };
  }
  const parsed = MetadataDocumentSchema.safeParse(json);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join(".") || "(document)"))];
    return { ok: false, reason: `the client's metadata document is not acceptable: ${fields.join(", ")}` };
  }
  if (parsed.data.client_id !== clientId)
    return { ok: false, reason: "the client's metadata document names another client_id" };
  const keep = Math.min(CACHE_SECONDS.max, Math.max(CACHE_SECONDS.min, fetched.maxAgeSeconds ?? CACHE_SECONDS.unsaid));
  const client = {
    id: clientId,
    name: parsed.data.client_name ?? new URL(clientId).hostname,
    redirectUris: parsed.data.redirect_uris,
    clientUri: parsed.data.client_uri ?? null,
    cacheUntil: new Date(Date.now() + keep * 1000),
  };
  await upsertMetadataClient(db, client);
  return { ok: true, client: { ...client, kind: "cimd", fetchedAt: new Date() } };
}

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
 * Registers a public client (RFC 7591). Anyone may register; a registered client can be granted only by a person
 * of a tenant whose admin allows such clients (checked at consent).
 */
export async function registerClient(input: unknown, address: string): Promise<RegistrationResult> {
  const parsed = RegistrationSchema.safeParse(input);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join(".") || "(body)"))];
    const field = fields[0] === "redirect_uris" ? "invalid_redirect_uri" : "invalid_client_metadata";
    return { ok: false, status: 400, error: field, description: `check these fields: ${fields.join(", ")}` };
  }
  const { token_endpoint_auth_method: method, grant_types: grants, response_types: responses } = parsed.data;
  if (method !== undefined && method !== "none")
    return {
      ok: false,
      status: 400,
      error: "invalid_client_metadata",
      description: "only public clients (token_endpoint_auth_method none) with PKCE are supported",
    };
  if (grants?.some((grant) => grant !== "authorization_code" && grant !== "refresh_token"))
    return {
      ok: false,
      status: 400,
      error: "invalid_client_metadata",
      description: "grant_types: only authorization_code and refresh_token",
    };
  if (responses?.some((response) => response !== "code"))
    return { ok: false, status: 400, error: "invalid_client_metadata", description: "response_types: only code" };
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
  await insertRegisteredClient(db, {
    id,
    name,
    redirectUris: parsed.data.redirect_uris,
    clientUri: parsed.data.client_uri ?? null,
    registeredFrom: address,
  });
  return {
    ok: true,
    status: 201,
    body: {
      client_id: id,
      client_id_issued_at: Math.floor(Date.now() / 1000),
      client_name: name,
      redirect_uris: parsed.data.redirect_uris,
      ...(parsed.data.client_uri ? { client_uri: parsed.data.client_uri } : {}),
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    },
  };
}
