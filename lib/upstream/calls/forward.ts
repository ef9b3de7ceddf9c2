import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { canonicalJson, sha256Hex } from "../../canonical";
import { db } from "../../db";
import { env } from "../../env";
import { recordLaterOutcomeWith } from "../../gateway";
import { logError } from "../../observe/log";
import { outcome, type Outcome } from "../../outcome";
import { dropUpstreamClient, upstreamClient } from "../servers/client";
import { splitName } from "../servers/definition";
import { MAX_STORED_DEPTH, storable } from "./storable";
import {
  findServerById,
  findUpstreamCall,
  moveUpstreamCall,
  settleSending,
  type ForwardedCall,
  type ServerRow,
} from "../sql";

// Forwarded once: the call's row already says `upstream.outcome-unknown` (committed before anything is sent), so a
// crash, a timeout or a cut connection leaves exactly that, for a person to resolve after checking upstream; nothing
// here ever sends a call twice. Only a call that provably never left (no connection) becomes `upstream.unreachable`.

/** Where the call's idempotency key travels, for servers that honour one. */
export const IDEMPOTENCY_META = "io.toolgate/idempotency-key";
/** The most of an upstream's answer the agent receives; a larger one is replaced by a note with its digest. */
export const MAX_RESULT_BYTES = 64 * 1024;
/** How much of the answer the decision log keeps beside its digest. */
export const EXCERPT_CHARS = 500;

/** A committed call as the process that committed it knows it: sent without reading it back. */
export interface Sending {
  call: ForwardedCall;
  server: ServerRow;
}

/**
 * Sends the committed call `toolCallId` (status `sending`) once and records what came back; `known` is the call as
 * the process that just committed it has it (otherwise it is read). Never throws: once the call is committed, any
 * failure to send it or to record its answer leaves it `upstream.outcome-unknown` (moved to `unknown` if it can be,
 * otherwise the desk lists it once it has been `sending` for `LOST_AFTER_TIMEOUT_MS` past its timeout).
 */
export async function forwardCall(toolCallId: string, known?: Sending): Promise<Outcome> {
  try {
    return await forwardOnce(toolCallId, known);
  } catch (error) {
    logError("upstream.forward-failed", error, { callId: toolCallId });
    await moveUpstreamCall(db, toolCallId, "sending", "unknown").catch((moveError) =>
      logError("upstream.record-failed", moveError, { callId: toolCallId }),
    );
    return outcome("upstream.outcome-unknown");
  }
}

async function forwardOnce(toolCallId: string, known?: Sending): Promise<Outcome> {
  const startedAt = performance.now();
  const { call, server } = known ?? (await readSending(toolCallId));
  const target = splitName(call.toolName);
  if (call.argsCanonical === null || !target)
    throw new Error(`the upstream call ${toolCallId} names no tool toolgate has`);
  let client;
  try {
    client = await upstreamClient(server);
  } catch (error) {
    logError("upstream.connect-failed", error, { callId: toolCallId, server: server.name });
    const unreachable = outcome("upstream.unreachable", {
      reason: `the server ${server.name} could not be reached; nothing was sent, the call may be proposed again`,
    });
    return settle(call, "not-sent", unreachable, null, startedAt);
  }
  let answer: Record<string, unknown>;
  try {
    answer = (await client.callTool(
      {
        name: target.tool,
        arguments: JSON.parse(call.argsCanonical),
        _meta: { [IDEMPOTENCY_META]: call.idempotencyKey },
      },
      undefined,
      { timeout: env().UPSTREAM_TIMEOUT_MS },
    )) as Record<string, unknown>;
  } catch (error) {
    if (!answered(error)) {
      logError("upstream.answer-lost", error, { callId: toolCallId, server: server.name });
      dropUpstreamClient(server);
      await moveUpstreamCall(db, toolCallId, "sending", "unknown");
      return outcome("upstream.outcome-unknown");
    }
    answer = { content: [{ type: "text", text: (error as Error).message }], isError: true };
  }
  const { result, digest, excerpt } = bounded(answer);
  return settle(call, "answered", outcome("upstream.called", { result }), { digest, excerpt }, startedAt);
}

async function readSending(toolCallId: string): Promise<Sending> {
  const call = await findUpstreamCall(db, toolCallId);
  if (!call || call.status !== "sending") throw new Error(`the upstream call ${toolCallId} is not waiting to be sent`);
  const server = await findServerById(db, call.serverId);
  if (!server) throw new Error(`the upstream call ${toolCallId} names no server toolgate has`);
  return { call, server };
}

/** A JSON-RPC error the server sent back is its answer; a timeout or a closed connection is no answer at all. */
function answered(error: unknown): boolean {
  return (
    error instanceof McpError && error.code !== ErrorCode.RequestTimeout && error.code !== ErrorCode.ConnectionClosed
  );
}

/**
 * The answer as the agent receives it (content, structured content, isError) within `MAX_RESULT_BYTES`, in text
 * PostgreSQL stores (see `storable`).
 */
export function bounded(answer: Record<string, unknown>): { result: unknown; digest: string; excerpt: string } {
  const whole = storable({
    content: answer.content ?? [],
    ...(answer.structuredContent === undefined ? {} : { structuredContent: answer.structuredContent }),
    isError: answer.isError === true,
  }) ?? {
    content: [
      {
        type: "text",
        text: `the upstream's answer was nested more than ${MAX_STORED_DEPTH} levels deep, deeper than toolgate passes on`,
      },
    ],
    isError: true,
  };
  const text = canonicalJson(whole);
  const digest = `sha256:${sha256Hex(text)}`;
  const bytes = Buffer.byteLength(text);
  const excerpt = Array.from(text).slice(0, EXCERPT_CHARS).join("");
  if (bytes <= MAX_RESULT_BYTES) return { result: whole, digest, excerpt };
  const note = `the upstream's answer was ${bytes} bytes, more than the ${MAX_RESULT_BYTES} toolgate passes on (${digest})`;
  return { result: { content: [{ type: "text", text: note }], isError: true }, digest, excerpt };
}

/** The answer (or that nothing was sent) with its decision-log row, in one statement, if the call is still `sending`. */
async function settle(
  call: ForwardedCall,
  status: "answered" | "not-sent",
  final: Outcome,
  recorded: { digest: string; excerpt: string } | null,
  startedAt: number,
): Promise<Outcome> {
  await recordLaterOutcomeWith(
    db,
    {
      callId: call.toolCallId,
      approvalId: call.approvalId,
      outcome: final,
      decision: {
        actorId: null,
        latencyMs: performance.now() - startedAt,
        detail: recorded
          ? {
              upstream: {
                server_tool: call.toolName,
                result_digest: recorded.digest,
                result_excerpt: recorded.excerpt,
              },
            }
          : {},
      },
    },
    settleSending(call.toolCallId, status, recorded?.digest ?? null, final),
  );
  return final;
}
