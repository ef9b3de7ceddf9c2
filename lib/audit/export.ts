import { z } from "zod";
import { db } from "../db";
import { rowHash } from "./seal";
import { appendAuditLog, findLogPage, type LogRow } from "./sql";

// Supervisors and admins take their tenant's decision log away as CSV or JSON Lines, for a date range: every row
// with its own hash, so a copy can be checked against the seals later.

// PostgreSQL has no year 0, which ISO 8601 and zod do have: such a bound would fail the first page of a 200.
const Instant = z
  .union([z.iso.date(), z.iso.datetime({ offset: true })])
  .transform((text) => new Date(text))
  .refine((date) => date.getUTCFullYear() >= 1, "must be in year 1 or later");
export const ExportQuerySchema = z
  .strictObject({ from: Instant, to: Instant, format: z.enum(["csv", "jsonl"]) })
  .refine((query) => query.from < query.to, { message: "from must be before to", path: ["to"] })
  .refine((query) => query.to.getTime() - query.from.getTime() <= 366 * 24 * 3600_000, {
    message: "at most 366 days",
    path: ["to"],
  });
export type ExportQuery = z.infer<typeof ExportQuerySchema>;

export type ExportResult =
  | { ok: true; contentType: string; filename: string; chunks: AsyncIterable<string> }
  | { ok: false; status: 400 | 403 | 404; code: string; message: string };

const COLUMNS = [
  "id",
  "created_at",
  "conversation_id",
  "tool_call_id",
  "tool",
  "order_id",
  "kind",
  "stage",
  "code",
  "actor_id",
  "replayed",
  "latency_ms",
  "detail",
  "txid",
  "row_hash",
] as const;
const PAGE = 1000;

/** The signed-in person asking, as the session names them. */
export interface Exporter {
  id: string;
  role: string;
  tenantId: string;
}

/** Authorizes against the tenant named in the path (another tenant's log is answered as missing), then exports. */
export async function exportDecisionLog(
  user: Exporter,
  tenantId: string,
  params: URLSearchParams,
): Promise<ExportResult> {
  if (user.role !== "SUPERVISOR" && user.role !== "ADMIN")
    return {
      ok: false,
      status: 403,
      code: "auth.forbidden",
      message: "only supervisors and admins export the decision log",
    };
  if (tenantId !== user.tenantId) return { ok: false, status: 404, code: "not-found", message: "tenant not found" };
  const parsed = ExportQuerySchema.safeParse(Object.fromEntries(params));
  if (!parsed.success) {
    const paths = [...new Set(parsed.error.issues.map((issue) => issue.path.join(".") || "(query)"))];
    return {
      ok: false,
      status: 400,
      code: "request.invalid",
      message: `invalid query: ${paths.join(", ")} (from and to as ISO dates, format csv or jsonl)`,
    };
  }
  const query = parsed.data;
  await appendAuditLog(db, {
    tenantId,
    actorId: user.id,
    action: "decision-log.exported",
    detail: { from: query.from.toISOString(), to: query.to.toISOString(), format: query.format },
  });
  const day = (date: Date) => date.toISOString().slice(0, 10);
  return {
    ok: true,
    contentType: query.format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
    filename: `decision-log-${tenantId}-${day(query.from)}-${day(query.to)}.${query.format}`,
    chunks: lines(tenantId, query),
  };
}

async function* lines(tenantId: string, query: ExportQuery): AsyncIterable<string> {
  if (query.format === "csv") yield `${COLUMNS.join(",")}\r\n`;
  let after = { createdAt: new Date(0), id: "0" };
  for (;;) {
    // Keyset pages over the (tenantId, createdAt) index, so a long range never sits in memory whole.
    const rows = await findLogPage(db, { tenantId, from: query.from, to: query.to, after, limit: PAGE });
    for (const row of rows)
      yield query.format === "csv" ? `${csvLine(record(row))}\r\n` : `${JSON.stringify(record(row))}\n`;
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1];
  }
}

function record(row: LogRow): Record<(typeof COLUMNS)[number], string | number | boolean | null> {
  return {
    id: row.id,
    created_at: row.createdAt.toISOString(),
    conversation_id: row.conversationId,
    tool_call_id: row.toolCallId,
    tool: row.toolName,
    order_id: row.orderId,
    kind: row.kind,
    stage: row.stage,
    code: row.code,
    actor_id: row.actorId,
    replayed: row.replayed,
    latency_ms: row.latencyMs,
    detail: row.detail === null ? null : JSON.stringify(row.detail),
    txid: row.txid,
    row_hash: rowHash(row),
  };
}

/** RFC 4180 quoting; a cell a spreadsheet would run as a formula is prefixed with an apostrophe. */
function csvLine(values: Record<string, string | number | boolean | null>): string {
  return COLUMNS.map((column) => {
    const value = values[column];
    if (value === null) return "";
    let text = String(value);
    if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  }).join(",");
}
