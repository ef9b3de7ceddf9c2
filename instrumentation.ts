export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { startJobs } = await import("./lib/jobs");
    const { installGracefulShutdown } = await import("./lib/shutdown");
    installGracefulShutdown();
    startJobs();
  }
}
