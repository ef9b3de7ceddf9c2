// The one way to the database, so the one place that marks lib/ as server code: a client component that imports
// anything reaching it fails the build. Scripts that run this code with tsx pass --conditions=react-server
// (package.json), as Next.js does for server code; Vitest maps the marker to tests/support/server-only.ts.
import "server-only";
import { createHash } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { Prisma, PrismaClient } from "../generated/prisma/client";
import { logError } from "../observe/log";
import { span } from "../observe/tracing";
import { env } from "../env";

/**
 * Where statements run: parameterized SQL written as tagged templates. `db` runs each on whichever pooled
 * connection is free, a `tx` from `transaction` runs them all on one; both send them straight to the pool under
 * the Prisma adapter (docs/decisions/003-gateway-sql-on-the-adapter-pool.md). A module's statements live in its
 * `sql.ts` and take a `Db`, or a `Tx` when they lock rows and so mean nothing outside a transaction.
 */
export interface Db {
  $queryRaw<T = unknown>(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Promise<T>;
  $executeRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Promise<number>;
}

declare const inTransaction: unique symbol;
/** One transaction, from `transaction(work)`: its statements commit together and its locks hold until then. */
export interface Tx extends Db {
  readonly [inTransaction]: true;
  /**
   * Runs `statement` as the transaction's last and commits in the same round trip, so the locks it takes are held
   * for it and the commit alone. It is prepared on the connection once and run by `EXECUTE` with its values written
   * in (strings, numbers, booleans and null only), as the opening statements are. If it fails nothing commits and
   * `work` should throw; once it has run, the transaction takes no more statements.
   */
  $queryThenCommit<T = unknown>(statement: Prisma.Sql): Promise<T>;
}

/**
 * The client: Prisma's model queries (a module's `sql.ts` reads and writes single rows with them) and raw
 * statements, which go straight to the pool. `transaction` is the one way to run statements together; the lint
 * keeps Prisma's own `$transaction` out of the product (tests still set up rows with it).
 */
export type Client = Omit<PrismaClient, "$queryRaw" | "$executeRaw"> & Db;

// Each distinct statement text (the first 256 seen; the rest stay unnamed) becomes a named prepared statement on
// every connection that runs it, through Prisma or not, so PostgreSQL plans it once per connection instead of
// on every call (planning was most of its time per call).
const MAX_PREPARED = 256;
const preparedNames = new Map<string, string>();
function preparedName(text: string): string | undefined {
  const known = preparedNames.get(text);
  if (known || preparedNames.size >= MAX_PREPARED) return known;
  const name = `tg_${createHash("sha256").update(text).digest("base64url").slice(0, 24)}`;
  preparedNames.set(text, name);
  return name;
}

interface Connection {
  pool: pg.Pool;
  counted: { statementCount: number } | null;
  /** `sqlOn(pool, counted)`, made once. */
  sql: Db;
}

// Kept on the client object under a registered symbol, not in a module-level map: Next.js may load this module
// more than once (per bundle, and again on every reload in development) while they all share one client.
const CONNECTION = Symbol.for("toolgate.db.connection");
type WithConnection = PrismaClient & { [CONNECTION]?: Connection };

export function createDb(connectionString: string, options: { countStatements?: boolean } = {}): PrismaClient {
  const max = env().DATABASE_POOL_MAX;
  const pool = new pg.Pool({ connectionString, max, connectionTimeoutMillis: 10_000 });
  // A pooled connection that breaks while idle is dropped by the pool; without a listener it would end the process.
  pool.on("error", (error) => logError("db.idle-connection", error));
  const adapter = new PrismaPg(pool, {
    disposeExternalPool: true,
    statementNameGenerator: (query) => preparedName(query.sql) ?? "",
  });
  const withConnection = (client: PrismaClient, counted: Connection["counted"]): PrismaClient =>
    Object.assign(client, { [CONNECTION]: { pool, counted, sql: sqlOn(pool, counted) } });
  if (!options.countStatements) return withConnection(new PrismaClient({ adapter }), null);
  // For benchmarks: every statement sent, transaction control included, through Prisma or not, is counted on
  // `statementCount`.
  const client = new PrismaClient({ adapter, log: [{ level: "query", emit: "event" }] });
  const counted = Object.assign(client, { statementCount: 0 });
  client.$on("query", () => {
    counted.statementCount++;
  });
  return withConnection(counted, counted);
}

const globalForDb = globalThis as unknown as { toolgateDb?: PrismaClient };

function instance(): PrismaClient {
  if (!globalForDb.toolgateDb) {
    const url = env().DATABASE_URL;
    if (!url) throw new Error("DATABASE_URL is not set: start the app with `npm run dev`, which provides one");
    globalForDb.toolgateDb = createDb(url);
  }
  return globalForDb.toolgateDb;
}

/** Ends the pool once its connections are idle (graceful shutdown). */
export async function closeDb(): Promise<void> {
  const client = globalForDb.toolgateDb;
  globalForDb.toolgateDb = undefined;
  await client?.$disconnect();
}

// Created on first use, not on import, so `next build` can load route modules without a database.
export const db: Client = new Proxy({} as Client, {
  get(_target, property) {
    if (property === "$queryRaw" || property === "$executeRaw") return connection().sql[property];
    const client = instance();
    const value = Reflect.get(client, property, client);
    return typeof value === "function" ? value.bind(client) : value;
  },
});

function connection(): Connection {
  const found = (instance() as WithConnection)[CONNECTION];
  if (!found) throw new Error("the database client was not made by createDb");
  return found;
}

// Column values as Prisma returns them: timestamps as Dates, JSON parsed, integers as numbers. Only BIGINT
// differs (a string here); the gateway's statements cast counts to int.
const TIMESTAMP = 1114;
const parseTimestampAsUtc = (text: string) => new Date(`${text.replace(" ", "T")}Z`);
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === TIMESTAMP && format !== "binary"
      ? parseTimestampAsUtc
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** A span per statement when tracing is on: the statement's text, never its parameters. */
const traced = <T>(text: string, send: () => Promise<T>): Promise<T> =>
  span("db.query", { "db.system.name": "postgresql", "db.query.text": text }, send);

function sqlOn(client: pg.Pool | pg.PoolClient, counted: Connection["counted"], open = () => true): Db {
  const run = (query: TemplateStringsArray | Prisma.Sql, values: unknown[]) => {
    if (!open()) throw new Error("the transaction has committed: a statement after it would run on its own");
    const statement = query instanceof Prisma.Sql ? query : new Prisma.Sql(query, values as Prisma.Sql[]);
    if (counted) counted.statementCount++;
    return traced(statement.text, () =>
      client.query({ name: preparedName(statement.text), text: statement.text, values: statement.values, types }),
    );
  };
  return {
    async $queryRaw<T>(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) {
      return (await run(query, values)).rows as T;
    },
    async $executeRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) {
      return (await run(query, values)).rowCount ?? 0;
    },
  };
}

/**
 * A parameter written into `EXECUTE`'s argument list: a string as an escaped literal, a finite number and a boolean
 * as themselves, null as NULL; anything else is refused.
 */
function literal(value: unknown): string {
  if (typeof value === "string") return pg.escapeLiteral(value);
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (value === null) return "NULL";
  throw new Error(`a statement sent with BEGIN takes strings, numbers, booleans and null only, not ${typeof value}`);
}

// The statements sent with BEGIN or COMMIT, prepared by name on each connection the first time it sends them (PREPARE is
// session state, so a connection remembers its own), in a namespace of their own beside the extended protocol's.
// The names are kept on the connection under a registered symbol, as the client's own state is (CONNECTION): every
// copy of this module Next.js loads (a route's bundle, a server action's) shares the pool, so a module-level map
// would not know what another copy prepared, and PREPARE again fails ("already exists").
const PREPARED_FOR_BEGIN = Symbol.for("toolgate.db.preparedForBegin");
type PreparingClient = pg.PoolClient & { [PREPARED_FOR_BEGIN]?: Set<string> };
const preparedOn = (client: PreparingClient) => (client[PREPARED_FOR_BEGIN] ??= new Set<string>());
const beginName = (text: string) => `tgb_${createHash("sha256").update(text).digest("hex").slice(0, 32)}`;

/** `statement` for the simple protocol: `EXECUTE` of its prepared name, after its `PREPARE` if `prepared` lacks it. */
function executeParts(prepared: Set<string>, statement: Prisma.Sql): { parts: string[]; preparing: string | null } {
  const name = beginName(statement.text);
  const values = statement.values.map(literal).join(", ");
  const execute = values ? `EXECUTE ${name}(${values})` : `EXECUTE ${name}`;
  if (prepared.has(name)) return { parts: [execute], preparing: null };
  return { parts: [`PREPARE ${name} AS ${statement.text}`, execute], preparing: name };
}

/**
 * Runs `work` in one transaction on one pooled connection: committed if it returns, rolled back if it throws.
 * A statement waits at most `statementTimeoutMs` (a lock held elsewhere included), like Prisma's transaction
 * timeout, so a stuck call cannot hold its locks indefinitely. `opening`, the transaction's first statements, are
 * sent in BEGIN's own round trip, each run as its own statement in order, and `work` gets the rows of each. The
 * simple protocol that carries several statements takes no parameters: each is prepared on the connection once
 * (`PREPARE`, planned as the extended protocol's named statements are) and run by `EXECUTE` with its values
 * written in as literals.
 */
export async function transaction<T>(
  work: (tx: Tx, opened: unknown[][]) => Promise<T>,
  { statementTimeoutMs = 15_000, opening = [] }: { statementTimeoutMs?: number; opening?: Prisma.Sql[] } = {},
): Promise<T> {
  const { pool, counted } = connection();
  const client = await pool.connect();
  const prepared = preparedOn(client);
  let broken = false;
  let committed = false;
  // A connection lost while it is checked out (the server restarted, its backend was ended) fails the statement
  // running on it; the client's error event, which nothing else listens to now, must not end the process.
  const lost = (error: Error) => {
    broken = true;
    logError("db.connection-lost", error);
  };
  client.on("error", lost);
  /**
   * Sends `parts` in one round trip of the simple protocol. A PREPARE that ran stays on the connection whatever
   * happens after it: a failed round trip leaves the connection's set of names unknown, so it is not reused.
   */
  const send = async (parts: string[], preparing: string[], named: string) => {
    if (preparing.length > 0) broken = true;
    // The span names the statements, never the values written into them.
    const results = (await traced(named, () =>
      client.query({ text: parts.join("; "), types }),
    )) as unknown as pg.QueryResult[];
    for (const name of preparing) prepared.add(name);
    broken = false;
    if (counted) counted.statementCount++;
    return results;
  };
  const tx = Object.assign(
    sqlOn(client, counted, () => !committed),
    {
      async $queryThenCommit<R>(statement: Prisma.Sql): Promise<R> {
        const { parts, preparing } = executeParts(prepared, statement);
        const results = await send([...parts, "COMMIT"], preparing ? [preparing] : [], `${statement.text}; COMMIT`);
        committed = true;
        return results[parts.length - 1].rows as R;
      },
    },
  ) as unknown as Tx;
  try {
    const parts = [`BEGIN; SET LOCAL statement_timeout = ${Math.trunc(statementTimeoutMs)}`];
    const preparing: string[] = [];
    const executes: number[] = [];
    for (const statement of opening) {
      const sent = executeParts(prepared, statement);
      if (sent.preparing) preparing.push(sent.preparing);
      parts.push(...sent.parts);
      // BEGIN and SET LOCAL are two results, then one per part.
      executes.push(parts.length);
    }
    const named = [parts[0], ...opening.map((statement) => statement.text)].join("; ");
    const results = await send(parts, preparing, named);
    const result = await work(
      tx,
      executes.map((index) => results[index].rows),
    );
    if (!committed) {
      await traced("COMMIT", () => client.query("COMMIT"));
      if (counted) counted.statementCount++;
    }
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    client.removeListener("error", lost);
    client.release(broken);
  }
}
