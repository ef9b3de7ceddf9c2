import { z } from "zod";
import { canonicalJson, sha256Hex } from "../../canonical";
import type { Db } from "../../db";
import { IdSchema } from "../../security/input";
import { findTool } from "../../tools/registry";
import type { ToolDefinition } from "../../tools/types";
import { findOriginCall, type LockedRequest, type OriginCall } from "./sql";

/** What an approval binds: the call it was made for, its tool and the arguments as proposed. */
export interface Binding {
  call: OriginCall;
  tool: ToolDefinition;
  args: Record<string, unknown>;
}

/**
 * The argument binding: the request and the call it was made for still agree on tool, conversation, order and
 * argument hash, the arguments hash to it and the tool still accepts them. Null when anything disagrees.
 */
export async function checkBinding(db: Db, request: LockedRequest): Promise<Binding | null> {
  const call = await findOriginCall(db, request.originCallId);
  const tool = findTool(request.toolName);
  const args = call?.argsCanonical ? (JSON.parse(call.argsCanonical) as Record<string, unknown>) : null;
  if (call === null || tool === undefined || args === null) return null;
  const bound =
    call.toolName === request.toolName &&
    call.conversationId === request.conversationId &&
    call.orderId === request.orderId &&
    call.argsHash === request.argsHash &&
    sha256Hex(canonicalJson(args)) === request.argsHash &&
    tool.schema.safeParse(args).success;
  return bound ? { call, tool, args } : null;
}

/** What a supervisor approves when it differs from the proposal: the same tool, with narrowed arguments. */
export const ApprovalEditSchema = z.strictObject({
  tool: IdSchema,
  arguments: z.record(z.string().max(100), z.unknown()),
});
export type ApprovalEdit = z.infer<typeof ApprovalEditSchema>;

/**
 * The arguments an approval binds: the proposal (or what the first approver approved) narrowed by the edit. Only
 * the tool's narrowable numbers may change, and only downwards; order, customer, currency and tool never.
 */
export function narrowArguments(
  tool: ToolDefinition,
  base: Record<string, unknown>,
  edit: ApprovalEdit | undefined,
): { ok: true; args: Record<string, unknown> } | { ok: false; message: string } {
  if (!edit) return { ok: true, args: base };
  if (edit.tool !== tool.name) return { ok: false, message: `an approval cannot change the tool (${tool.name})` };
  const keys = new Set([...Object.keys(base), ...Object.keys(edit.arguments)]);
  for (const key of [...keys].sort()) {
    const [before, after] = [base[key], edit.arguments[key]];
    if (!(tool.narrowable ?? []).includes(key)) {
      if (canonicalJson(before) !== canonicalJson(after))
        return { ok: false, message: `an approval cannot change ${key}` };
      continue;
    }
    if (
      typeof before !== "number" ||
      typeof after !== "number" ||
      !Number.isInteger(after) ||
      after < 1 ||
      after > before
    ) {
      return { ok: false, message: `an approval can only lower ${key} (at most ${String(before)})` };
    }
  }
  const args = { ...base, ...edit.arguments };
  return tool.schema.safeParse(args).success
    ? { ok: true, args }
    : { ok: false, message: "the edited arguments are not valid for this tool" };
}
