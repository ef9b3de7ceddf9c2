// What every route answers with and reads through, whichever feature it serves: the error body and bounded bodies.

export function errorResponse(status: number, code: string, message: string, headers: HeadersInit = {}): Response {
  return Response.json({ error: { code, message } }, { status, headers });
}

export interface BoundedBody {
  /** The body as received, cut off just past the limit so an oversized body is never held whole. */
  bytes: Uint8Array;
  /** True when the sender sent more than `bytes` holds. */
  truncated: boolean;
}

const unreadBodies = new WeakSet<Request>();

/** Whether the rest of this request's body was left on the connection (it was longer than its limit). */
export const leftUnread = (request: Request): boolean => unreadBodies.has(request);

/** Reads at most one byte past `limit`, so an oversized body is refused without being buffered whole. */
export async function readBoundedBody(request: Request, limit: number): Promise<BoundedBody> {
  if (!request.body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      unreadBodies.add(request);
      return { bytes: new Uint8Array(0), truncated: true };
    }
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes, truncated: false };
}
