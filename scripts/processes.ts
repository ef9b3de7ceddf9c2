import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";

/** Whether process `pid` is alive and its command line mentions `name` (so a reused pid does not count). */
export function processRunning(pid: number, name: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(name);
  } catch {
    return true;
  }
}

/** Fails with a message a person can act on when something already listens on `port`. */
export function assertPortFree(port: number, what: string, variable: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          error.code === "EADDRINUSE"
            ? `port ${port}, for ${what}, is already in use by another program: stop that program, or choose another port with ${variable}=<port>`
            : `cannot listen on 127.0.0.1:${port} for ${what}: ${error.message}`,
        ),
      ),
    );
    server.listen(port, "127.0.0.1", () => server.close(() => resolve()));
  });
}

/** A random secret kept in `file` (readable by its owner only): read if it is there, made once otherwise. */
export async function keptSecret(file: string, bytes: number): Promise<string> {
  const existing = (await readFile(file, "utf8").catch(() => "")).trim();
  if (existing) return existing;
  const created = randomBytes(bytes).toString("base64url");
  await writeFile(file, created, { mode: 0o600 });
  return created;
}
