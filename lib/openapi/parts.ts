import { z } from "zod";
import { exposedTools, TOOL_NAMES } from "../tools/registry";
import { errorBodySchema, oauthErrorSchema } from "./schemas";

// The pieces every part of the OpenAPI document is built from (lib/openapi/document.ts): schemas from zod, the error
// answers with the SPEC's codes, the shared headers, parameters and security requirements.

export type Json = Record<string, unknown>;

/** A schema's JSON Schema (2020-12, OpenAPI 3.1's dialect) as a schema object: without its `$schema`. */
export function jsonSchema(schema: z.ZodType, io: "input" | "output"): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io }) as Json;
  return rest;
}

/** One envelope per tool, `{name, arguments}`, its arguments the very schema the gateway's schema stage enforces. */
export const ToolCallEnvelopeSchema = z.union(
  exposedTools(TOOL_NAMES).map((tool) => z.strictObject({ name: z.literal(tool.name), arguments: tool.schema })),
);

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export const json = (schema: Json) => ({ "application/json": { schema } });

const header = (description: string, schema: Json = { type: "string" }) => ({ description, schema });
export const RETRY_AFTER = {
  "Retry-After": header("seconds to wait before trying again", { type: "integer", minimum: 0 }),
};
export const BEARER_CHALLENGE = {
  "WWW-Authenticate": header(
    "the bearer challenge: for /api/mcp, where its resource metadata is and which scopes to ask for",
  ),
};

/** An answer with the routes' error body, `codes` the SPEC's codes it can carry. */
export const problem = (description: string, codes: string[], headers?: Json) => ({
  description,
  ...(headers ? { headers } : {}),
  content: json(jsonSchema(errorBodySchema(codes), "output")),
});

export const oauthProblem = (description: string, errors: string[]) => ({
  description,
  content: json(jsonSchema(oauthErrorSchema(errors), "output")),
});

/** The answers every agent route can give besides its own: a bad key, and a failure of the host. */
export const agentProblems = {
  "401": problem("no API key, or one that is unknown or revoked", ["auth.invalid-key"], BEARER_CHALLENGE),
  "503": problem("the host could not complete the request; retry later", ["host.error"]),
};

export const idParameter = (name: string, description: string) => ({
  name,
  in: "path",
  required: true,
  description,
  schema: { type: "string" },
});

/** A strict object schema's fields as query parameters. */
export function queryParameters(schema: z.ZodType): Json[] {
  const { properties = {}, required = [] } = jsonSchema(schema, "input") as {
    properties?: Record<string, Json>;
    required?: string[];
  };
  return Object.entries(properties).map(([name, fieldSchema]) => ({
    name,
    in: "query",
    required: required.includes(name),
    schema: fieldSchema,
  }));
}

export const AGENT = [{ apiKey: [] }];
export const AGENT_OR_CONNECTION = [{ apiKey: [] }, { oauth: [] }];
