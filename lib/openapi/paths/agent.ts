import { FORMATS } from "../../agent-api/adapters/adapt";
import { MAX_WAIT_SECONDS } from "../../agent-api/tool-calls";
import { OpenConversationSchema } from "../../conversations/open";
import { MAX_DEPTH, MAX_ENVELOPE_BYTES } from "../../gateway";
import { DEFINITION_FORMATS } from "../../tools/registry";
import { AGENT, agentProblems, idParameter, json, jsonSchema, problem, ref, RETRY_AFTER, type Json } from "../parts";

// The agent API's paths in the OpenAPI document: conversations, tools, tool calls and batches, with an agent's key.

/** The `format` query parameter: toolgate's own shape by default, or one of `formats`. */
const formatParameter = (formats: readonly string[], description?: string) => ({
  name: "format",
  in: "query",
  required: false,
  ...(description ? { description } : {}),
  schema: { type: "string", enum: [...formats], default: "toolgate" },
});

export function agentPaths(): Json {
  return {
    "/api/v1/conversations": {
      post: {
        operationId: "openConversation",
        tags: ["Agent API"],
        summary: "Open a conversation about one customer (and optionally one order)",
        security: AGENT,
        requestBody: { required: true, content: json(jsonSchema(OpenConversationSchema, "input")) },
        responses: {
          "201": { description: "the conversation, its tools and scopes", content: json(ref("Conversation")) },
          "400": problem("the body is not valid (names the fields), or names a tool that does not exist", [
            "request.invalid",
            "tool.unknown",
          ]),
          "403": problem("the key's person is not an active agent", ["agent.not-authorized"]),
          "404": problem("no such customer in the agent's tenant, or no such order of the customer", [
            "customer.not-found",
            "order.not-found",
          ]),
          "413": problem("the body is larger than 16 KiB; it was not read further", ["request.too-large"]),
          "429": problem(
            "this agent opened too many conversations this minute, across its keys and connections; nothing opened",
            ["rate.limited"],
            RETRY_AFTER,
          ),
          ...agentProblems,
        },
      },
    },
    "/api/v1/conversations/{id}/tool-calls": {
      post: {
        operationId: "proposeToolCall",
        tags: ["Agent API"],
        summary: "Propose a tool call; the gateway's sequence decides its outcome",
        description: `The body is the raw envelope text, \`{"name", "arguments"}\` (at most ${MAX_ENVELOPE_BYTES} bytes, nesting at most ${MAX_DEPTH}, no duplicate keys), or with \`format\` a provider's payload of one or more calls. Every gateway outcome is 200 (its \`kind\` says what happened) except \`rate.limited\`, 429.`,
        security: AGENT,
        parameters: [
          idParameter("id", "the conversation"),
          formatParameter(
            FORMATS,
            "toolgate (one envelope, answered with one outcome) or a provider's payload (a batch)",
          ),
          {
            name: "Idempotency-Key",
            in: "header",
            required: false,
            description:
              "the call key: 1..200 printable ASCII characters (else call-key.missing); in a batch it becomes <key>:<index>",
            schema: { type: "string" },
          },
        ],
        requestBody: {
          required: true,
          content: json({
            anyOf: [
              ref("ToolCallEnvelope"),
              {
                type: "object",
                description: "a provider's payload, with ?format= naming it",
                additionalProperties: {},
              },
            ],
          }),
        },
        responses: {
          "200": {
            description: "the call's outcome (format=toolgate), or one outcome per call of a provider's payload",
            content: json({ anyOf: [ref("CallOutcome"), ref("BatchOutcome")] }),
          },
          "400": problem("format is not one of the formats", ["format.unknown"]),
          "404": problem("no such conversation of this agent", ["not-found"]),
          "429": {
            description: "rate.limited: the conversation's or the agent's calls this minute are spent",
            headers: RETRY_AFTER,
            content: json(ref("CallOutcome")),
          },
          ...agentProblems,
        },
      },
    },
    "/api/v1/conversations/{id}/tools": {
      get: {
        operationId: "listTools",
        tags: ["Agent API"],
        summary: "The model-facing tool definitions of a conversation",
        security: AGENT,
        parameters: [idParameter("id", "the conversation"), formatParameter(DEFINITION_FORMATS)],
        responses: {
          "200": {
            description: "the tools, generated from the schemas the gateway enforces",
            content: json(ref("ToolList")),
          },
          "400": problem("format is not one of the formats", ["format.unknown"]),
          "404": problem("no such conversation of this agent", ["not-found"]),
          ...agentProblems,
        },
      },
    },
    "/api/v1/tool-calls/{id}": {
      get: {
        operationId: "getToolCall",
        tags: ["Agent API"],
        summary: "A call's current outcome, optionally waiting for its decision",
        security: AGENT,
        parameters: [
          idParameter("id", "the call"),
          {
            name: "wait",
            in: "query",
            required: false,
            description:
              "seconds to wait for an undecided call to be decided; answered as soon as it is, else with its outcome then",
            schema: { type: "integer", minimum: 0, maximum: MAX_WAIT_SECONDS, default: 0 },
          },
        ],
        responses: {
          "200": { description: "the call's outcome", content: json(ref("CallOutcome")) },
          "400": problem(`wait is not a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}`, ["wait.invalid"]),
          "404": problem("no such call of this agent", ["not-found"]),
          "429": problem(
            "the agent's calls and reads this minute are spent, across its keys and connections (each read counts once, however long it waits)",
            ["rate.limited"],
            RETRY_AFTER,
          ),
          ...agentProblems,
        },
      },
    },
  };
}
