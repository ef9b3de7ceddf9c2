/** Operator-facing log lines (JSON on stderr). Detail goes here, never to a caller. */
export function logError(event: string, error: unknown, context: Record<string, unknown> = {}): void {
  const detail = error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) };
  console.error(JSON.stringify({ level: "error", event, at: new Date().toISOString(), ...context, error: detail }));
}

export function logInfo(event: string, context: Record<string, unknown> = {}): void {
  console.error(JSON.stringify({ level: "info", event, at: new Date().toISOString(), ...context }));
}
