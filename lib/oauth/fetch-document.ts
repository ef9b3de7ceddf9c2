import "server-only";
import type { DocumentFetcher } from "./clients";

// The fetcher for Client ID Metadata Documents. It must go through the outbound-request guard (resolve, refuse
// loopback, private, link-local and metadata addresses, connect to the checked address, no redirects, size and
// time limits); until that guard is part of the tree, no document is fetched and such clients are refused.
export const fetchMetadataDocument: DocumentFetcher = async () => ({
  ok: false,
  reason: "this server does not fetch client metadata documents yet",
});
