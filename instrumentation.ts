export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { startTracing, tracingRequested } = await import("./lib/tracing");
    if (tracingRequested()) await startTracing();
    const { startJobs } = await import("./lib/jobs");
    const { installGracefulShutdown } = await import("./lib/shutdown");
    installGracefulShutdown();
    startJobs();
  }
}
