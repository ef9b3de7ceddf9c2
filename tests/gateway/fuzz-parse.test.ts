import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_DEPTH, MAX_ENVELOPE_BYTES, parseEnvelope } from "@/lib/gateway/checks/parse";

// Property-based fuzzing of the envelope parser. Fixed seed so CI is repeatable; FUZZ_SEED replays another.
const SEED = Number(process.env.FUZZ_SEED ?? 424242);
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const PARSE_CODES = [
  "parse.too-large",
  "parse.too-deep",
  "parse.malformed",
  "parse.duplicate-key",
  "parse.envelope-invalid",
];

const encode = (text: string) => ({ bytes: new TextEncoder().encode(text), truncated: false });
const run = (property: fc.IProperty<unknown> | fc.IAsyncProperty<unknown>, name: string) => {
  console.log(`fuzz ${name}: seed ${SEED}, ${RUNS} runs`);
  return fc.assert(property as fc.IProperty<unknown>, { seed: SEED, numRuns: RUNS });
};

function depthOf(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe("envelope parser properties", () => {
  it("never throws on arbitrary text, and answers ok or a parse code", () => {
    run(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.json()), (text) => {
        const result = parseEnvelope(encode(text));
        expect(result.ok || PARSE_CODES.includes(result.outcome.code)).toBe(true);
      }),
      "arbitrary text",
    );
  });

  it("never throws on arbitrary bytes, including invalid UTF-8", () => {
    run(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const result = parseEnvelope({ bytes, truncated: false });
        expect(result.ok || PARSE_CODES.includes(result.outcome.code)).toBe(true);
      }),
      "arbitrary bytes",
    );
  });

  it("agrees with JSON.parse on every valid envelope within the limits", () => {
    run(
      fc.property(fc.string(), fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 6 })), (name, args) => {
        const text = JSON.stringify({ name, arguments: args });
        const result = parseEnvelope(encode(text));
        const fits = new TextEncoder().encode(text).byteLength <= MAX_ENVELOPE_BYTES && depthOf(args) + 1 <= MAX_DEPTH;
        if (!fits) return;
        expect(result).toEqual({ ok: true, value: JSON.parse(text) });
      }),
      "valid envelopes",
    );
  });

  it("refuses a repeated key wherever it is injected", () => {
    run(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1 }), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1 }),
        fc.nat(),
        (args, pick) => {
          const keys = Object.keys(args);
          const key = keys[pick % keys.length];
          const inner = JSON.stringify(args).slice(1, -1);
          const text = `{"name":"x","arguments":{${inner},${JSON.stringify(key)}:1}}`;
          const result = parseEnvelope(encode(text));
          if (result.ok) throw new Error(`duplicate ${key} accepted`);
          expect(["parse.duplicate-key", "parse.too-deep", "parse.too-large"]).toContain(result.outcome.code);
        },
      ),
      "duplicate keys",
    );
  });

  it("refuses nesting exactly when it is deeper than the limit", () => {
    run(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.boolean(), (depth, arrays) => {
        let value = "0";
        for (let i = 0; i < depth; i++) value = arrays ? `[${value}]` : `{"k":${value}}`;
        const result = parseEnvelope(encode(`{"name":"x","arguments":{"v":${value}}}`));
        if (depth + 2 > MAX_DEPTH) expect(result).toMatchObject({ ok: false, outcome: { code: "parse.too-deep" } });
        else expect(result.ok).toBe(true);
      }),
      "nesting",
    );
  });

  it("counts the limit in bytes, at the edge", () => {
    run(
      fc.property(fc.integer({ min: -40, max: 40 }), fc.constantFrom("a", "é", "€", "😀"), (offset, unit) => {
        const skeleton = `{"name":"x","arguments":{"p":""}}`;
        const budget = MAX_ENVELOPE_BYTES - skeleton.length + offset;
        const unitBytes = new TextEncoder().encode(unit).byteLength;
        const padding = unit.repeat(Math.max(0, Math.floor(budget / unitBytes)));
        const text = `{"name":"x","arguments":{"p":"${padding}"}}`;
        const size = new TextEncoder().encode(text).byteLength;
        const result = parseEnvelope(encode(text));
        if (size > MAX_ENVELOPE_BYTES)
          expect(result).toMatchObject({ ok: false, outcome: { code: "parse.too-large" } });
        else expect(result.ok).toBe(true);
      }),
      "byte limit",
    );
  });
});
