import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { env } from "../env";

// Requests this server makes to an address someone else chose (a tenant's webhook, an OAuth client's metadata
// document). Without care such a request reaches what only this server can: its own loopback services, the
// compose network, a cloud's metadata endpoint. So every name is resolved here, every address it resolves to is
// checked, and the connection goes to the address that was checked (a custom `lookup`), so a DNS answer that
// changes between check and connect (rebinding) cannot slip through. No redirect is followed; the answer is
// bounded in size and time. Hosts the operator lists in OUTBOUND_ALLOWED_HOSTS may resolve to private addresses
// (local fakes in development and tests); nothing may reach a metadata address.

const METADATA = ["169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"].map((address) =>
  ipaddr.parse(address).toString(),
);

const ranges = (cidrs: string[]) => cidrs.map((cidr) => ipaddr.parseCIDR(cidr));

const INTERNAL = ranges([
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "224.0.0.0/3",
  "::/128",
  "::1/128",
  "fc00::/7",
  "fe80::/10",
  "ff00::/8",
]);

// IPv6 forms whose last 32 bits are the IPv4 host a translator (or the kernel) delivers to: IPv4-mapped, SIIT's
// IPv4-translated (RFC 6145) and NAT64's well-known prefix (RFC 6052). Each is judged as that IPv4 address, so a
// DNS64 network still reaches public IPv4 receivers and `64:ff9b::169.254.169.254` is the metadata address it is.
const TRANSLATED = ranges(["::ffff:0:0/96", "::ffff:0:0:0/96", "64:ff9b::/96"]);

// Forms whose IPv4 part is a tunnel's relay or a layout the local network chose (IPv4-compatible, 6to4, Teredo,
// local-use NAT64), and deprecated site-local: no public receiver has one, so they count as internal.
const TRANSITION = ranges(["::/96", "2002::/16", "2001::/32", "64:ff9b:1::/48", "fec0::/10"]);

const within = (address: ipaddr.IPv4 | ipaddr.IPv6, list: [ipaddr.IPv4 | ipaddr.IPv6, number][]) =>
  list.some((range) => range[0].kind() === address.kind() && address.match(range));

export type AddressKind = "metadata" | "internal" | "public";

/** An address as it is judged, with the words that say what it is when it is refused. */
function judge(raw: string): { kind: AddressKind; what: string } {
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.parse(raw);
  } catch {
    return { kind: "internal", what: "not an address this server can judge" };
  }
  if (address instanceof ipaddr.IPv6 && within(address, TRANSLATED))
    return judge(ipaddr.fromByteArray(address.toByteArray().slice(12)).toString());
  if (METADATA.includes(address.toString())) return { kind: "metadata", what: "a cloud metadata address" };
  if (within(address, INTERNAL)) return { kind: "internal", what: "a loopback, private or link-local address" };
  if (within(address, TRANSITION))
    return {
      kind: "internal",
      what: "an IPv6 transition or site-local address (IPv4-compatible, 6to4, Teredo, local NAT64, fec0::/10)",
    };
  return { kind: "public", what: "a public address" };
}

/** Whether an IP address is a cloud metadata endpoint, loopback/private/link-local/reserved, or public. */
export function classifyAddress(raw: string): AddressKind {
  return judge(raw).kind;
}

export class OutboundRefused extends Error {
  constructor(
    readonly code:
      "outbound.invalid-url" | "outbound.forbidden-address" | "outbound.unresolvable" | "outbound.plain-http",
    message: string,
  ) {
    super(message);
    this.name = "OutboundRefused";
  }
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, "").toLowerCase();

/** Whether the operator listed this host (alone, or with this URL's port) in OUTBOUND_ALLOWED_HOSTS. */
function operatorAllows(url: URL): boolean {
  const host = hostOf(url);
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return env().OUTBOUND_ALLOWED_HOSTS.some((entry) => entry === host || entry === `${host}:${port}`);
}

function refuseUnlessAllowed(address: string, host: string, allowed: boolean): void {
  const { kind, what } = judge(address);
  if (kind === "public" || (kind === "internal" && allowed)) return;
  const which = host === address ? host : `${host} resolves to ${address}, which`;
  throw new OutboundRefused(
    "outbound.forbidden-address",
    `${which} is ${what}; this server sends only to public addresses`,
  );
}

function parseTarget(raw: string | URL): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefused("outbound.invalid-url", "not a URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new OutboundRefused("outbound.invalid-url", "only http and https URLs are allowed");
  if (url.username || url.password)
    throw new OutboundRefused("outbound.invalid-url", "credentials in the URL are not allowed");
  return url;
}

const LOOKUP_TIMEOUT_MS = 5000;

/**
 * The system resolver runs each lookup on one of libuv's four threads, which password hashing and file reads share,
 * and holds it until the name server answers or it gives up (about 30 s), however long ago the caller stopped
 * waiting. So at most this many run at once; the others wait their turn within their own 5 s. Names at a silent name
 * server (an admin's, any tenant's) then slow outbound requests only, never everything else on the threads.
 */
const MAX_SYSTEM_LOOKUPS = 2;
let systemLookups = 0;
const lookupTurns: (() => void)[] = [];

/** `dnsLookup` once fewer than MAX_SYSTEM_LOOKUPS run, or "timed out" when its turn and its answer take over 5 s. */
async function boundedLookup(host: string): Promise<{ address: string; family: number }[] | "timed out"> {
  let timer: NodeJS.Timeout | undefined;
  let gaveUp = false;
  const timedOut = new Promise<"timed out">((resolve) => {
    timer = setTimeout(() => {
      gaveUp = true;
      resolve("timed out");
    }, LOOKUP_TIMEOUT_MS);
  });
  const answered = (async () => {
    if (systemLookups < MAX_SYSTEM_LOOKUPS) systemLookups++;
    // A turn comes with its place already counted.
    else await new Promise<void>((turn) => lookupTurns.push(turn));
    try {
      // Its caller stopped waiting while it queued: the place goes to the next in line, unused.
      return gaveUp ? [] : await dnsLookup(host, { all: true, verbatim: true }).catch(() => []);
    } finally {
      systemLookups--;
      if (lookupTurns.length > 0) {
        systemLookups++;
        lookupTurns.shift()!();
      }
    }
  })();
  return Promise.race([answered, timedOut]).finally(() => clearTimeout(timer));
}

/** Every address the host resolves to, each checked; throws OutboundRefused naming the first forbidden one. */
async function resolveChecked(url: URL): Promise<{ address: string; family: number }[]> {
  const host = hostOf(url);
  const allowed = operatorAllows(url);
  if (isIP(host)) {
    refuseUnlessAllowed(host, host, allowed);
    return [{ address: host, family: isIP(host) }];
  }
  // The system resolver may retry a silent name server for half a minute; a form or a delivery waits 5 s.
  const answers = await boundedLookup(host);
  if (answers === "timed out")
    throw new OutboundRefused("outbound.unresolvable", `${host} did not resolve within ${LOOKUP_TIMEOUT_MS / 1000} s`);
  if (answers.length === 0) throw new OutboundRefused("outbound.unresolvable", `${host} does not resolve`);
  for (const answer of answers) refuseUnlessAllowed(answer.address, host, allowed);
  return answers;
}

/**
 * A request that carries a signature (a webhook delivery) goes over https in production: over plain http anyone on
 * the way reads the signed body and can replay it within its timestamp's tolerance.
 */
function refusePlainHttp(url: URL, signed: boolean | undefined): void {
  if (signed && url.protocol === "http:" && env().NODE_ENV === "production")
    throw new OutboundRefused(
      "outbound.plain-http",
      "plain http is refused in production, since what toolgate sends there (signed deliveries, tool calls, secrets) would cross the network readable and replayable",
    );
}

/** The check a form runs before saving a URL this server will later send to: throws OutboundRefused. */
export async function checkOutboundUrl(raw: string, options: { signed?: boolean } = {}): Promise<void> {
  const url = parseTarget(raw);
  await resolveChecked(url);
  refusePlainHttp(url, options.signed);
}

/** Resolves at connect time and hands the socket only an address that passed the check. */
const checkedLookup =
  (url: URL): LookupFunction =>
  (_hostname, options, callback) => {
    resolveChecked(url).then(
      (answers) => {
        if (options.all) callback(null, answers);
        else callback(null, answers[0].address, answers[0].family);
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, "", 0),
    );
  };

export interface OutboundResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface OutboundRequest {
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  maxBytes?: number;
  /** The request carries a signature: https only, in production. */
  signed?: boolean;
}

/**
 * One request to a URL someone else chose, to a checked address only, following no redirect (a 3xx comes back as
 * it is). Throws OutboundRefused before connecting to a forbidden address, or an Error on timeout or an answer
 * larger than `maxBytes`.
 */
export async function outboundFetch(raw: string | URL, request: OutboundRequest = {}): Promise<OutboundResponse> {
  const url = parseTarget(raw);
  refusePlainHttp(url, request.signed);
  const hostAddress = hostOf(url);
  // An IP literal never reaches `lookup`, so it is checked here.
  if (isIP(hostAddress)) await resolveChecked(url);
  const { timeoutMs = 5000, maxBytes = 1024 * 1024 } = request;
  const client = url.protocol === "https:" ? https : http;
  return new Promise<OutboundResponse>((resolve, reject) => {
    const outgoing = client.request(
      url,
      {
        method: request.method ?? "GET",
        headers: request.headers,
        lookup: checkedLookup(url),
        agent: false,
        timeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        let size = 0;
        incoming.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            reject(new Error(`the answer from ${url.host} is larger than ${maxBytes} bytes`));
            outgoing.destroy();
            return;
          }
          chunks.push(chunk);
        });
        incoming.on("end", () =>
          resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: Buffer.concat(chunks) }),
        );
        incoming.on("error", reject);
      },
    );
    outgoing.on("timeout", () => outgoing.destroy(new Error(`${url.host} did not answer within ${timeoutMs} ms`)));
    outgoing.on("error", (error: Error) => reject(error));
    outgoing.end(request.body);
  });
}

/**
 * `fetch` for a client library that talks to a server someone else chose (an upstream MCP server): the same checked
 * addresses and no redirects as `outboundFetch`, but the answer streams (an MCP server may answer as server-sent
 * events) and is cut at `maxBytes`. Times out through the caller's signal.
 */
export function guardedFetch(maxBytes: number) {
  return async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const url = parseTarget(input);
    refusePlainHttp(url, true);
    if (isIP(hostOf(url))) await resolveChecked(url);
    const client = url.protocol === "https:" ? https : http;
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    return new Promise<Response>((resolve, reject) => {
      const outgoing = client.request(
        url,
        {
          method: init.method ?? "GET",
          headers,
          lookup: checkedLookup(url),
          agent: false,
          signal: init.signal ?? undefined,
        },
        (incoming) => {
          let size = 0;
          const body = new ReadableStream<Uint8Array>({
            start(controller) {
              incoming.on("data", (chunk: Buffer) => {
                size += chunk.length;
                if (size > maxBytes) {
                  controller.error(new Error(`the answer from ${url.host} is larger than ${maxBytes} bytes`));
                  outgoing.destroy();
                  return;
                }
                controller.enqueue(new Uint8Array(chunk));
              });
              incoming.on("end", () => controller.close());
              incoming.on("error", (error) => controller.error(error));
            },
            cancel() {
              outgoing.destroy();
            },
          });
          const answer = new Headers();
          for (const [name, value] of Object.entries(incoming.headers))
            if (value !== undefined) answer.set(name, Array.isArray(value) ? value.join(", ") : value);
          const status = incoming.statusCode ?? 502;
          resolve(new Response([101, 204, 205, 304].includes(status) ? null : body, { status, headers: answer }));
        },
      );
      outgoing.on("error", (error: Error) => reject(error));
      outgoing.end(typeof init.body === "string" ? init.body : undefined);
    });
  };
}
