// The instance's shutdown state, read by the readiness check so a load balancer stops sending it traffic.

const globalForShutdown = globalThis as unknown as { toolgateShutdown?: { since: number } };

export const shuttingDown = (): boolean => globalForShutdown.toolgateShutdown !== undefined;
