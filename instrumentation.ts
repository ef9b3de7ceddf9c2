export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    // A bad or missing setting stops the start here, naming the variable and what it accepts: Next.js would
    // otherwise keep the process up, failing every request.
    const { startupProblems } = await import("./lib/env");
    const problems = startupProblems();
    if (problems.length) {
      console.error(`toolgate refuses to start: ${problems.join("; ")}`);
      process.exit(1);
    }
    const { startTracing, tracingRequested } = await import("./lib/observe/tracing");
    if (tracingRequested()) await startTracing();
    const { startJobs } = await import("./lib/instance/jobs");
    const { installGracefulShutdown } = await import("./lib/instance/shutdown");
    installGracefulShutdown();
    startJobs();
  }
}
