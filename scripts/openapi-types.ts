import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from "openapi-typescript";
import prettier from "prettier";
import { openApiDocument } from "../lib/openapi/document";

// `npm run openapi:types`: the TypeScript types of GET /api/openapi.json (openapi-typescript), which the generated
// client's test (tests/openapi/client.integration.test.ts) uses with openapi-fetch. That test generates them again
// from the served document and fails when this file differs, so it cannot go stale unnoticed.

export const TYPES_FILE = path.resolve(import.meta.dirname, "../tests/openapi/toolgate-api.d.ts");

/** The document's types as openapi-typescript writes them, laid out by the project's Prettier. */
export async function apiTypes(document: object): Promise<string> {
  const text = COMMENT_HEADER + astToString(await openapiTS(document as OpenAPI3));
  const options = await prettier.resolveConfig(TYPES_FILE);
  return prettier.format(text, { ...options, filepath: TYPES_FILE });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // The types name no address, so any issuer makes the same file.
  writeFileSync(TYPES_FILE, await apiTypes(openApiDocument("http://localhost:3000")));
  console.log(`wrote ${path.relative(process.cwd(), TYPES_FILE)}`);
}
