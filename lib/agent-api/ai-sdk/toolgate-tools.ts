import { jsonSchema, tool, type ToolSet } from "ai";

// Vercel AI SDK tools for one toolgate conversation. The model sees the definitions toolgate generates from
// its own schemas; every `execute` goes through toolgate's HTTP API, so the same sequence decides. What comes
// back to the model is toolgate's `model` projection: `ok` with the result, `needs_approval` (the call is
// held, not executed), `invalid_arguments` with the paths to fix and what each must be, `invalid_request` with what to change,
// `not_found`, `not_allowed` (with the supervisor's `reason` when one was given), `pending_confirmation` (a refund
// that may have happened: do not retry, check later), `unavailable`.
//
//   const tools = await toolgateTools({ baseUrl, apiKey, conversationId });
//   const { text } = await generateText({ model, tools, stopWhen: stepCountIs(5), prompt });

export interface ToolgateToolsOptions {
  baseUrl: string;
  apiKey: string;
  conversationId: string;
  fetch?: typeof fetch;
}

interface McpDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export async function toolgateTools(options: ToolgateToolsOptions): Promise<ToolSet> {
  const request = options.fetch ?? fetch;
  const base = `${options.baseUrl.replace(/\/$/, "")}/api/v1/conversations/${encodeURIComponent(options.conversationId)}`;
  const auth = { authorization: `Bearer ${options.apiKey}` };
  const listed = await request(`${base}/tools?format=mcp`, { headers: auth });
  if (!listed.ok) throw new Error(`toolgate: could not list tools (${listed.status})`);
  const { tools } = (await listed.json()) as { tools: McpDefinition[] };
  return Object.fromEntries(
    tools.map((definition) => [
      definition.name,
      tool({
        description: definition.description,
        // No client-side validation: toolgate is the one place that decides, and says which paths to fix.
        inputSchema: jsonSchema(definition.inputSchema as Parameters<typeof jsonSchema>[0]),
        async execute(input, { toolCallId }) {
          const response = await request(`${base}/tool-calls`, {
            method: "POST",
            // The provider's tool-call id makes a retried step replay instead of acting twice.
            headers: { ...auth, "content-type": "application/json", "idempotency-key": `ai-sdk:${toolCallId}` },
            body: JSON.stringify({ name: definition.name, arguments: input }),
          });
          if (response.status === 429) return { status: "unavailable" };
          const body = (await response.json()) as { model?: unknown };
          return body.model ?? { status: "unavailable" };
        },
      }),
    ]),
  );
}
