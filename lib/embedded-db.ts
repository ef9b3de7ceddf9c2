import { mkdir } from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * The zero-setup database: PGlite keeps its files in a git-ignored folder and speaks the PostgreSQL wire
 * protocol on loopback, so the app connects to it exactly as it would to a real server.
 */
export async function startEmbeddedDatabase(dataDir: string, port: number): Promise<EmbeddedDatabase> {
  await mkdir(path.dirname(dataDir), { recursive: true });
  const pglite = await PGlite.create(dataDir);
  const server = new PGLiteSocketServer({ db: pglite, host: "127.0.0.1", port });
  await server.start();
  return {
    url: `postgresql://postgres:postgres@127.0.0.1:${port}/postgres?sslmode=disable`,
    async stop() {
      await server.stop();
      await pglite.close();
    },
  };
}
