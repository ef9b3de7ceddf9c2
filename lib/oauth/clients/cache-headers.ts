// How long a client's metadata document may be kept, as its own HTTP answer says (RFC 9111 §4.2.1): `s-maxage`
// (toolgate keeps one copy for every person, as a shared cache does), else `max-age`, less the `Age` it already
// had; else `Expires` against the answer's `Date`. `no-store` and `no-cache` mean now. Undefined when it says nothing.

const seconds = (value: string | undefined) =>
  value !== undefined && /^\d{1,10}$/.test(value) ? Number(value) : undefined;

export function freshnessSeconds(headers: {
  cacheControl?: string;
  age?: string;
  expires?: string;
  date?: string;
}): number | undefined {
  const directives = new Map(
    (headers.cacheControl ?? "")
      .split(",")
      .map((part) => part.trim().toLowerCase().split("=") as [string, string | undefined])
      .filter(([name]) => name.length > 0)
      .map(([name, value]) => [name, value?.replace(/^"|"$/g, "")]),
  );
  if (directives.has("no-store") || directives.has("no-cache")) return 0;
  const maxAge = seconds(directives.get("s-maxage")) ?? seconds(directives.get("max-age"));
  if (maxAge !== undefined) return Math.max(0, maxAge - (seconds(headers.age) ?? 0));
  if (headers.expires === undefined) return undefined;
  const expires = Date.parse(headers.expires);
  if (Number.isNaN(expires)) return 0;
  const date = headers.date === undefined ? Date.now() : Date.parse(headers.date);
  return Math.max(0, Math.floor((expires - (Number.isNaN(date) ? Date.now() : date)) / 1000));
}
