import { describe, expect, it } from "vitest";
import { MAX_ENVELOPE_BYTES, parseEnvelope } from "@/lib/gateway/checks/parse";

const raw = (text: string) => ({ bytes: new TextEncoder().encode(text), truncated: false });
const codeOf = (text: string) => {
  const result = parseEnvelope(raw(text));
  return result.ok ? "ok" : result.outcome.code;
};
const nest = (depth: number) => {
  let value = "1";
  for (let i = 0; i < depth; i++) value = `{"a":${value}}`;
  return value;
};

describe("envelope parser", () => {
  it("accepts a plain envelope and keeps values exactly", () => {
    const result = parseEnvelope(
      raw(`{"name":"get_order","arguments":{"order_id":"ord_1001","n":-1.5e2,"b":[true,false,null]}}`),
    );
    expect(result).toEqual({
      ok: true,
      value: { name: "get_order", arguments: { order_id: "ord_1001", n: -150, b: [true, false, null] } },
    });
  });

  it("allows depth 8 (the envelope counts as 1) and refuses 9", () => {
    expect(codeOf(`{"name":"x","arguments":${nest(7)}}`)).toBe("ok");
    expect(codeOf(`{"name":"x","arguments":${nest(8)}}`)).toBe("parse.too-deep");
    expect(codeOf(`{"name":"x","arguments":{"a":[[[[[[[1]]]]]]]}}`)).toBe("parse.too-deep");
  });

  it("checks the byte limit before decoding", () => {
    const body = `{"name":"x","arguments":{"p":"${"a".repeat(MAX_ENVELOPE_BYTES)}"}}`;
    expect(codeOf(body)).toBe("parse.too-large");
    expect(parseEnvelope({ bytes: new Uint8Array(0), truncated: true })).toMatchObject({
      ok: false,
      outcome: { code: "parse.too-large" },
    });
  });

  it("finds duplicate keys at any level, after unescaping", () => {
    expect(codeOf(`{"name":"x","arguments":{"a":{"b":1,"b":2}}}`)).toBe("parse.duplicate-key");
    expect(codeOf(`{"name":"x","arguments":{"a":[{"k":1,"\\u006b":2}]}}`)).toBe("parse.duplicate-key");
    expect(codeOf(`{"name":"x","arguments":{"a":{"b":1},"c":{"b":2}}}`)).toBe("ok");
  });

  it("refuses what JSON.parse would refuse, and what it would quietly allow", () => {
    for (const text of [
      "",
      "{",
      "nul",
      "{'name':1}",
      `{"name":"x","arguments":{}}garbage`,
      `{"name":"x","arguments":{"a":01}}`,
      `{"name":"x","arguments":{"a":NaN}}`,
      `{"name":"x","arguments":{"a":"\u0001"}}`,
      `{"name":"x","arguments":{"a":1,}}`,
      `{"name":"x","arguments":{"a":1e999}}`,
    ]) {
      expect(codeOf(text), text).toBe("parse.malformed");
    }
  });

  it("requires exactly name (string) and arguments (object)", () => {
    for (const text of [
      `[]`,
      `"x"`,
      `{"name":"x"}`,
      `{"arguments":{}}`,
      `{"name":"x","arguments":null}`,
      `{"name":"x","arguments":[]}`,
      `{"name":1,"arguments":{}}`,
      `{"name":"x","arguments":{},"id":1}`,
    ]) {
      expect(codeOf(text), text).toBe("parse.envelope-invalid");
    }
  });

  it("treats __proto__ as an ordinary own key, never as a prototype", () => {
    const result = parseEnvelope(raw(`{"name":"x","arguments":{"__proto__":{"polluted":true}}}`));
    if (!result.ok) throw new Error("should parse");
    expect(Object.getPrototypeOf(result.value.arguments)).toBe(Object.prototype);
    expect(Object.keys(result.value.arguments)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
