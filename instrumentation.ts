export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    // A bad setting stops the start here, naming the variable and what it accepts.
    const { env, startupProblems } = await import("./lib/env");
    const problems = startupProblems(env());
    if (problems.length) throw new Error(`refusing to start: ${problems.join("; ")}`);
    const { startTracing, tracingRequested } = await import("./lib/tracing");
    if (tracingRequested()) await startTracing();
    const { startJobs } = await import("./lib/jobs");
    const { installGracefulShutdown } = await import("./lib/shutdown");
    installGracefulShutdown();
    startJobs();
  }
}
