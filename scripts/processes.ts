import { readFileSync } from "node:fs";
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
