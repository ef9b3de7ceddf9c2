import { ExportQuerySchema } from "../../audit/export";
import { HealthSchema, ReadinessSchema } from "../schemas";
import { BEARER_CHALLENGE, idParameter, json, jsonSchema, problem, queryParameters, type Json } from "../parts";

// The paths for people and operations in the OpenAPI document: the decision log's export, health, readiness,
// metrics and the document itself.

export function operatorPaths(): Json {
  return {
    "/api/tenants/{tenantId}/decision-log": {
      get: {
        operationId: "exportDecisionLog",
        tags: ["Decision log"],
        summary: "The tenant's decision log for a date range, every row with its hash (SPEC section 12)",
        security: [{ session: [] }],
        parameters: [idParameter("tenantId", "the signed-in person's tenant"), ...queryParameters(ExportQuerySchema)],
        responses: {
          "200": {
            description: "an attachment, streamed",
            content: {
              "text/csv": { schema: { type: "string" } },
              "application/x-ndjson": { schema: { type: "string" } },
            },
          },
          "400": problem(
            "from and to are not ISO dates in order (at most 366 days apart), or format is not csv or jsonl",
            ["request.invalid"],
          ),
          "401": problem("not signed in", ["auth.required"]),
          "403": problem("only supervisors and admins export the decision log", ["auth.forbidden"]),
          "404": problem("another tenant's log is answered as missing", ["not-found"]),
        },
      },
    },
    "/api/health": {
      get: {
        operationId: "health",
        tags: ["Operations"],
        summary: "Liveness: the process answers (no database)",
        security: [],
        responses: { "200": { description: "alive", content: json(jsonSchema(HealthSchema, "output")) } },
      },
    },
    "/api/ready": {
      get: {
        operationId: "ready",
        tags: ["Operations"],
        summary: "Readiness: whether this instance should get traffic",
        description: "Anyone gets the status; the metrics token's holder also gets the checks.",
        security: [{}, { metricsToken: [] }],
        responses: {
          "200": { description: "ready", content: json(jsonSchema(ReadinessSchema, "output")) },
          "503": {
            description: "not ready: with the metrics token, failing names the parts",
            content: json(jsonSchema(ReadinessSchema, "output")),
          },
        },
      },
    },
    "/api/metrics": {
      get: {
        operationId: "metrics",
        tags: ["Operations"],
        summary: "Prometheus metrics",
        security: [{ metricsToken: [] }],
        responses: {
          "200": { description: "Prometheus text format", content: { "text/plain": { schema: { type: "string" } } } },
          "401": problem("a valid metrics token is required", ["metrics.unauthorized"], BEARER_CHALLENGE),
        },
      },
    },
    "/api/openapi.json": {
      get: {
        operationId: "openApiDocument",
        tags: ["Operations"],
        summary: "This document",
        security: [],
        responses: { "200": { description: "the OpenAPI 3.1 document", content: json({ type: "object" }) } },
      },
    },
  };
}
