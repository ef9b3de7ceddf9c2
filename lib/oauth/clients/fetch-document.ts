import { outboundFetch } from "../../security/outbound";
import { freshnessSeconds } from "./cache-headers";
import type { DocumentFetcher } from "./clients";

/**
 * Client ID Metadata Documents come through the outbound guard (lib/security/outbound.ts): resolved and checked
 * (no loopback, private, link-local or metadata address), no redirects, within the size and time limits.
 */
export const fetchMetadataDocument: DocumentFetcher = async (url, limits) => {
  try {
    const response = await outboundFetch(url, {
      headers: { accept: "application/json" },
      maxBytes: limits.maxBytes,
      timeoutMs: limits.timeoutMs,
    });
    return {
      ok: true,
      status: response.status,
      contentType: String(response.headers["content-type"] ?? ""),
      body: response.body.toString("utf8"),
      maxAgeSeconds: freshnessSeconds({
        cacheControl: response.headers["cache-control"],
        age: response.headers.age,
        expires: response.headers.expires,
        date: response.headers.date,
      }),
    };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : "the request failed" };
  }
};
