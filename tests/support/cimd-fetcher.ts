import type { DocumentFetcher } from "@/lib/oauth/clients/clients";

// One client known by its metadata document (CIMD), as the OAuth tests meet it: its URL, its redirect URI, and a
// document fetcher that serves its document, for a test file to mock the real fetcher with
//   vi.mock("@/lib/oauth/clients/fetch-document", async () => (await import("./cimd-fetcher")).cimdFetcherMock());

export const REDIRECT = "http://127.0.0.1:33418/callback";
export const CIMD_URL = "https://client.example/oauth/client.json";

export const cimdDocument = () =>
  JSON.stringify({
    client_id: CIMD_URL,
    client_name: "Example Desktop",
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: "none",
  });

export const cimdFetcherMock = () => ({
  fetchMetadataDocument: (async () => ({
    ok: true,
    status: 200,
    contentType: "application/json",
    body: cimdDocument(),
  })) as DocumentFetcher,
});
