import { canonicalJson, sha256Hex } from "../../canonical";

// An upstream tool's definition as toolgate pins it: what the model reads and what the supervisor's card and the
// schema check rely on. A change to any of it (a rug pull or an honest upgrade) changes the hash and quarantines the
// tool until an admin reviews the change.

/** A server's name is the namespace of its tools: lowercase letters, digits and single hyphens, no underscore. */
export const SERVER_NAME = /^[a-z][a-z0-9-]{0,29}$/;
/** Between a server's name and its tool's: no server name holds it, so the first one splits the two. */
export const SEPARATOR = "__";
/** The MCP specification's tool names. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export type ToolStatus = "pending-review" | "reviewed" | "quarantined";
export type Verdict = "allow" | "hold" | "deny";
export const VERDICTS: readonly Verdict[] = ["allow", "hold", "deny"];

export interface PinnedDefinition {
  name: string;
  title: string | null;
  description: string | null;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown> | null;
  annotations: Record<string, unknown> | null;
}

/** A tool as an MCP server lists it (`tools/list`). */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** The definition's pinned fields, every one present (null when the server gave none), and their hash. */
export function pinDefinition(tool: ListedTool): { definition: PinnedDefinition; hash: string } {
  const definition: PinnedDefinition = {
    name: tool.name,
    title: tool.title ?? null,
    description: tool.description ?? null,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema ?? null,
    annotations: tool.annotations ?? null,
  };
  return { definition, hash: sha256Hex(canonicalJson(definition)) };
}

/** Whether a server may name a tool this way (anything else is left out of the review, never exposed). */
export const isToolName = (name: string) => TOOL_NAME.test(name);

/** The server's own claim that the tool only reads: never proof, but the default a reviewer starts from. */
export const claimsReadOnly = (definition: PinnedDefinition) => definition.annotations?.readOnlyHint === true;

/** Without an admin's word: a tool that claims to only read runs, anything else waits for a supervisor. */
export const defaultVerdict = (definition: PinnedDefinition): Verdict =>
  claimsReadOnly(definition) ? "allow" : "hold";

export const namespaced = (server: string, tool: string) => `${server}${SEPARATOR}${tool}`;

/** What OpenAI's and Anthropic's APIs take as a function's name (MCP hosts pass tool names on to them). */
const PROVIDER_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const HASH_CHARS = 12;

/**
 * The name a model is offered for a namespaced tool: the name itself when a provider takes it, otherwise (a `.`, or
 * longer than 64 characters) its server's prefix, the rest with each other character as `_`, cut to fit, and 12 hex
 * characters of the whole name's hash. It keeps the prefix, so no other server's tool can be named by it.
 */
export function providerName(name: string): string {
  if (PROVIDER_NAME.test(name)) return name;
  const at = name.indexOf(SEPARATOR) + SEPARATOR.length;
  const hash = sha256Hex(name).slice(0, HASH_CHARS);
  const rest = name
    .slice(at)
    .replace(/[^A-Za-z0-9_-]/g, "_")
    .slice(0, 64 - at - HASH_CHARS - 1);
  return `${name.slice(0, at)}${rest}_${hash}`;
}

/**
 * Which of `names` a model meant by `called`: the name itself, else the one offered as `called` (a provider name),
 * when exactly one is; null when none (or, by a hash collision, more than one) is.
 */
export function resolveOffered(names: readonly string[], called: string): string | null {
  if (names.includes(called)) return called;
  const offeredAs = names.filter((name) => providerName(name) === called);
  return offeredAs.length === 1 ? offeredAs[0] : null;
}

/** `files__write_file` as its server's and its tool's names; null for a name no upstream tool can have. */
export function splitName(name: string): { server: string; tool: string } | null {
  const at = name.indexOf(SEPARATOR);
  if (at < 0) return null;
  const server = name.slice(0, at);
  const tool = name.slice(at + SEPARATOR.length);
  return SERVER_NAME.test(server) && isToolName(tool) ? { server, tool } : null;
}
