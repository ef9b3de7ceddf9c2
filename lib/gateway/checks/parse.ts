import { isPlainObject } from "../../canonical";
import type { BoundedBody } from "../../http";
import { isStorableText } from "../../security/input";
import { pass, stop, type StageResult } from "../../outcome";
import { ORDER_ID } from "../../tools/types";

export const MAX_ENVELOPE_BYTES = 16 * 1024;
export const MAX_DEPTH = 8;

export type RawProposal = BoundedBody;

export interface Envelope {
  name: string;
  arguments: Record<string, unknown>;
}

class ParseFailure {
  constructor(readonly code: "parse.too-deep" | "parse.malformed" | "parse.duplicate-key") {}
}

/** Raw bytes to a JSON value under the envelope limits (size, depth, duplicate keys). Never throws. */
export function parseJsonText(raw: RawProposal): StageResult<unknown> {
  if (raw.truncated || raw.bytes.byteLength > MAX_ENVELOPE_BYTES) return stop("parse.too-large");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(raw.bytes);
  } catch {
    return stop("parse.malformed");
  }
  try {
    return pass(new StrictJsonParser(text).parseDocument());
  } catch (error) {
    if (error instanceof ParseFailure) return stop(error.code);
    return stop("parse.malformed");
  }
}

/**
 * The order id a proposal's body names in `arguments.order_id`, read ahead of the stages so the agent API's key lookup
 * can read that order in its own statement (`HintedOrder`): a hint, never a decision. Null when the body is not an
 * envelope naming one well-formed order id.
 */
export function orderHintOf(raw: RawProposal): string | null {
  const parsed = parseJsonText(raw);
  if (!parsed.ok || !isPlainObject(parsed.value) || !isPlainObject(parsed.value.arguments)) return null;
  const orderId = parsed.value.arguments.order_id;
  return typeof orderId === "string" && ORDER_ID.test(orderId) ? orderId : null;
}

/** Stage 2: raw bytes to an envelope, with limits JSON.parse does not have. Never throws. */
export function parseEnvelope(raw: RawProposal): StageResult<Envelope> {
  const parsed = parseJsonText(raw);
  if (!parsed.ok) return parsed;
  const value = parsed.value;
  if (!isPlainObject(value)) return stop("parse.envelope-invalid");
  const keys = Object.keys(value);
  if (keys.length !== 2 || !keys.includes("name") || !keys.includes("arguments")) return stop("parse.envelope-invalid");
  const { name, arguments: args } = value as Record<string, unknown>;
  if (typeof name !== "string" || !isPlainObject(args)) return stop("parse.envelope-invalid");
  return pass({ name, arguments: args });
}

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

/**
 * RFC 8259 JSON with three extra refusals: nesting deeper than MAX_DEPTH, a key repeated in one object
 * (compared after unescaping, so "a" and "\u0061" collide), and anything after the document.
 * Objects get own properties only, so "__proto__" is an ordinary key and never a prototype.
 */
class StrictJsonParser {
  private position = 0;

  constructor(private readonly text: string) {}

  parseDocument(): unknown {
    const value = this.parseValue(0);
    this.skipWhitespace();
    if (this.position !== this.text.length) throw new ParseFailure("parse.malformed");
    return value;
  }

  private parseValue(depth: number): unknown {
    this.skipWhitespace();
    const char = this.text[this.position];
    if (char === "{") return this.parseObject(depth + 1);
    if (char === "[") return this.parseArray(depth + 1);
    if (char === '"') return this.parseString();
    if (this.text.startsWith("true", this.position)) return this.literal(4, true);
    if (this.text.startsWith("false", this.position)) return this.literal(5, false);
    if (this.text.startsWith("null", this.position)) return this.literal(4, null);
    return this.parseNumber();
  }

  private parseObject(depth: number): Record<string, unknown> {
    if (depth > MAX_DEPTH) throw new ParseFailure("parse.too-deep");
    this.position++;
    const result: Record<string, unknown> = {};
    const seen = new Set<string>();
    this.skipWhitespace();
    if (this.text[this.position] === "}") {
      this.position++;
      return result;
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text[this.position] !== '"') throw new ParseFailure("parse.malformed");
      const key = this.parseString();
      if (seen.has(key)) throw new ParseFailure("parse.duplicate-key");
      seen.add(key);
      this.skipWhitespace();
      if (this.text[this.position] !== ":") throw new ParseFailure("parse.malformed");
      this.position++;
      const value = this.parseValue(depth);
      Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true });
      this.skipWhitespace();
      const next = this.text[this.position++];
      if (next === "}") return result;
      if (next !== ",") throw new ParseFailure("parse.malformed");
    }
  }

  private parseArray(depth: number): unknown[] {
    if (depth > MAX_DEPTH) throw new ParseFailure("parse.too-deep");
    this.position++;
    const result: unknown[] = [];
    this.skipWhitespace();
    if (this.text[this.position] === "]") {
      this.position++;
      return result;
    }
    for (;;) {
      result.push(this.parseValue(depth));
      this.skipWhitespace();
      const next = this.text[this.position++];
      if (next === "]") return result;
      if (next !== ",") throw new ParseFailure("parse.malformed");
    }
  }

  private parseString(): string {
    STRING.lastIndex = this.position;
    const match = STRING.exec(this.text);
    if (!match) throw new ParseFailure("parse.malformed");
    this.position += match[0].length;
    const value = JSON.parse(match[0]) as string;
    // Valid JSON that PostgreSQL cannot hold (a NUL, an unpaired surrogate) is refused here, not as a 5xx later.
    if (!isStorableText(value)) throw new ParseFailure("parse.malformed");
    return value;
  }

  private parseNumber(): number {
    NUMBER.lastIndex = this.position;
    const match = NUMBER.exec(this.text);
    if (!match) throw new ParseFailure("parse.malformed");
    this.position += match[0].length;
    const value = Number(match[0]);
    if (!Number.isFinite(value)) throw new ParseFailure("parse.malformed");
    return value;
  }

  private literal<T>(length: number, value: T): T {
    this.position += length;
    return value;
  }

  private skipWhitespace(): void {
    while (this.position < this.text.length && WHITESPACE.has(this.text.charCodeAt(this.position))) this.position++;
  }
}
