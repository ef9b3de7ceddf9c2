import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect as baseExpect, test, type Browser, type BrowserContext, type Page } from "@playwright/test";
import { freePort } from "../../scripts/pg-cluster";
import { untilAnswers } from "../../tests/support/until-ready";

// `next dev` compiles each page, route and server action the first time it is used: on a busy two-core machine that
// takes longer than the suite's usual ten seconds, so this walk waits as long as a newcomer would.
const expect = baseExpect.configure({ timeout: 60_000 });

// The README's start path as a newcomer meets it: `npm run dev` on an empty data folder (the embedded PostgreSQL,
// development mode), the five-minute walk in Chromium, a restart on the same folder, and the walk again. Any
// browser console error, page error, failed request or Next.js error overlay fails it, and so does an error line
// in what the start printed.

test.describe.configure({ mode: "serial", timeout: 600_000 });

interface DevRun {
  child: ChildProcess;
  output: () => string;
  baseURL: string;
}

const stateDir = mkdtempSync(path.join(tmpdir(), "toolgate-first-run-"));
let ports: Record<"app" | "db" | "provider" | "smtp", number>;

async function startDev(): Promise<DevRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, TOOLGATE_STATE_DIR: stateDir, NEXT_TELEMETRY_DISABLED: "1" };
  for (const name of [
    "DATABASE_URL",
    "PAYMENT_PROVIDER_URL",
    "PAYMENT_PROVIDER_SECRET",
    "SMTP_HOST",
    "SMTP_PORT",
    "NEXTAUTH_URL",
    "NEXTAUTH_SECRET",
    "NODE_ENV",
    "TOOLGATE_KEYS_FILE",
  ]) {
    delete env[name];
  }
  Object.assign(env, {
    PORT: String(ports.app),
    EMBEDDED_PG_PORT: String(ports.db),
    FAKE_PROVIDER_PORT: String(ports.provider),
    SMTP_SINK_PORT: String(ports.smtp),
  });
  // The README's command, in its own process group so stopping it is a Ctrl-C in a terminal.
  const child = spawn("npm", ["run", "dev"], { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const baseURL = `http://127.0.0.1:${ports.app}`;
  await untilAnswers(`${baseURL}/login`, {
    child,
    name: "npm run dev",
    timeoutMs: 240_000,
    intervalMs: 500,
    output: () => output,
  });
  return { child, output: () => output, baseURL };
}

/** Ctrl-C: SIGINT to the whole process group, then the run must end by itself, its database stopped. */
async function stopDev(run: DevRun): Promise<void> {
  const exited = new Promise<number | null>((resolve) => run.child.once("exit", (code) => resolve(code)));
  process.kill(-run.child.pid!, "SIGINT");
  const code = await Promise.race([
    exited,
    new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 60_000)),
  ]);
  expect(code, `npm run dev did not stop on Ctrl-C:\n${run.output()}`).not.toBe("timeout");
  expect(
    existsSync(path.join(stateDir, "postgres", "postmaster.pid")),
    "the embedded PostgreSQL is still running after Ctrl-C",
  ).toBe(false);
}

function errorLines(output: string): string[] {
  return output.split("\n").filter((line) => /"level":"error"|⨯|\bError:|Unhandled|ECONNREFUSED/.test(line));
}

/** Fails the test on anything a person would see as broken in the browser. */
function watchForProblems(page: Page, problems: string[]): void {
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error on ${page.url()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error on ${page.url()}: ${error.message}`));
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} for ${response.url()}`);
  });
}

async function expectNoOverlay(page: Page): Promise<void> {
  await expect(page.locator("[data-nextjs-dialog], [data-issues-count]")).toHaveCount(0);
}

async function signIn(
  browser: Browser,
  baseURL: string,
  email: string,
  problems: string[],
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ baseURL });
  const page = await context.newPage();
  watchForProblems(page, problems);
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill("toolgate-demo");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("whoami")).toContainText(email, { timeout: 60_000 });
  return { context, page };
}

function agentKey(): string {
  const keys = JSON.parse(readFileSync(path.join(stateDir, "dev-keys.json"), "utf8")) as Record<string, string>;
  return keys["agent@acme.test"];
}

async function api(baseURL: string, route: string, body: unknown, callKey?: string) {
  const response = await fetch(`${baseURL}${route}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${agentKey()}`,
      "content-type": "application/json",
      ...(callKey ? { "idempotency-key": callKey } : {}),
    },
    body: JSON.stringify(body),
  });
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  return (await response.json()) as { id: string; kind: string; code: string; approval?: { id: string } };
}

const refund = (order: string, amountCents: number) => ({
  name: "issue_refund",
  arguments: { order_id: order, amount_cents: amountCents, currency: "USD", reason: "damaged" },
});

/**
 * The README's walk: the agent proposes a refund over HTTP, the supervisor approves it in the browser, the agent's
 * page turns it into `executed` through the event stream (a pushed event, not the poll); a second request is denied
 * with a reason. Each round refunds a little more than the auto limit, on orders with room for all three rounds.
 */
async function walk(browser: Browser, run: DevRun, round: number, problems: string[]): Promise<void> {
  const { baseURL } = run;
  const [customer, order] = round === 1 ? ["cu_ana", "ord_1004"] : ["cu_ben", "ord_1002"];
  const amountCents = 5001 + round;
  const conversation = await api(baseURL, "/api/v1/conversations", { customer_id: customer });
  const held = await api(
    baseURL,
    `/api/v1/conversations/${conversation.id}/tool-calls`,
    refund(order, amountCents),
    `walk-${round}-a`,
  );
  expect(held).toMatchObject({ kind: "pending_approval", code: "approval.required" });

  const agent = await signIn(browser, baseURL, "agent@acme.test", problems);
  const pushed: string[] = [];
  const cdp = await agent.context.newCDPSession(agent.page);
  await cdp.send("Network.enable");
  cdp.on("Network.eventSourceMessageReceived", (event) => pushed.push(event.data));
  await agent.page.goto(`/conversations/${conversation.id}`);
  const row = agent.page.locator(`[data-testid="call-row"][data-call-id="${held.id}"]`);
  await expect(row.getByTestId("call-code")).toHaveText("approval.required");
  await expect(agent.page.getByTestId("live-state")).toHaveText("● live");

  const supervisor = await signIn(browser, baseURL, "supervisor@acme.test", problems);
  await supervisor.page.goto("/approvals");
  const item = supervisor.page.locator(`[data-testid="approval-item"][data-approval-id="${held.approval!.id}"]`);
  await expect(item).toContainText(`${(amountCents / 100).toFixed(2)} USD`);
  await expect(item.getByTestId("time-left")).toHaveText(/^\d+ minutes?( \d+ seconds?)? left$/);
  await expectNoOverlay(supervisor.page);
  const pushedBefore = pushed.length;
  await item.getByRole("button", { name: "Approve", exact: true }).click();
  const dialog = supervisor.page.getByTestId("decide-dialog");
  await dialog.getByRole("button", { name: "Confirm approval" }).click();
  await expect(supervisor.page.getByTestId("toast")).toContainText("approved");
  await expect(row.getByTestId("call-kind")).toHaveText("executed");
  await expect(row.getByTestId("call-code")).toHaveText("refund.issued");
  expect(
    pushed.slice(pushedBefore).some((data) => JSON.parse(data).via === "push"),
    `events: ${pushed.join(" | ")}`,
  ).toBe(true);

  const second = await api(
    baseURL,
    `/api/v1/conversations/${conversation.id}/tool-calls`,
    refund(order, 5050),
    `walk-${round}-b`,
  );
  expect(second.code).toBe("approval.required");
  // The open desk shows the new request by itself (its event stream), without a reload.
  const denied = supervisor.page.locator(`[data-testid="approval-item"][data-approval-id="${second.approval!.id}"]`);
  await expect(denied).toBeVisible();
  await denied.getByRole("button", { name: "Deny", exact: true }).click();
  await dialog.getByLabel(/Reason/).fill("already refunded by phone");
  await dialog.getByRole("button", { name: "Deny", exact: true }).click();
  const deniedRow = agent.page.locator(`[data-testid="call-row"][data-call-id="${second.id}"]`);
  await expect(deniedRow.getByTestId("call-code")).toHaveText("approval.denied");
  await expect(deniedRow.getByTestId("call-reason")).toHaveText("Why: already refunded by phone");

  // Afterwards every page still answers, for each role.
  for (const route of ["/", "/approvals", "/approvals/history"]) {
    await supervisor.page.goto(route);
    await expectNoOverlay(supervisor.page);
  }
  for (const route of ["/", "/conversations", `/conversations/${conversation.id}`]) {
    await agent.page.goto(route);
    await expectNoOverlay(agent.page);
  }
  const admin = await signIn(browser, baseURL, "admin@acme.test", problems);
  await admin.page.goto("/admin/policy");
  await expectNoOverlay(admin.page);
  // `next dev` logs a response the browser abandons mid-stream as an error, and until the warm-up has compiled the
  // first pages, requests of an open page can still be on their way: a person closes the tab once it has settled.
  await expect.poll(run.output).toContain("the first pages are compiled");
  await admin.page.waitForLoadState("networkidle");
  for (const session of [agent, supervisor, admin]) await session.context.close();
}

test.beforeAll(async () => {
  ports = { app: await freePort(), db: await freePort(), provider: await freePort(), smtp: await freePort() };
});

test.afterAll(() => {
  rmSync(stateDir, { recursive: true, force: true });
});

async function killDev(run: DevRun): Promise<void> {
  const exited = new Promise((resolve) => run.child.once("exit", resolve));
  process.kill(-run.child.pid!, "SIGKILL");
  await exited;
}

test("npm run dev on an empty folder: the README's walk, approve and deny, twice; after a killed run; after a restart", async ({
  browser,
}) => {
  const problems: string[] = [];
  const first = await startDev();
  try {
    await walk(browser, first, 1, problems);
    await walk(browser, first, 2, problems);
  } finally {
    // A terminal closed under it: nothing stops the database, which keeps running on the folder.
    await killDev(first);
  }
  expect(errorLines(first.output()), first.output()).toEqual([]);
  const keyBefore = agentKey();

  const second = await startDev();
  try {
    expect(second.output()).toContain("the embedded database was left running by an earlier run");
    expect(second.output()).toContain("demo data already in the database");
    expect(agentKey()).toBe(keyBefore);
    await walk(browser, second, 3, problems);
  } finally {
    await stopDev(second);
  }
  expect(errorLines(second.output()), second.output()).toEqual([]);

  const third = await startDev();
  try {
    expect(third.output()).not.toContain("left running");
    const { context } = await signIn(browser, third.baseURL, "supervisor@acme.test", problems);
    await context.close();
  } finally {
    await stopDev(third);
  }
  expect(errorLines(third.output()), third.output()).toEqual([]);
  expect(problems).toEqual([]);
});

test("a port already in use stops the start with a message that says what to do", async () => {
  const blocker = createServer().listen(ports.app, "127.0.0.1");
  await new Promise((resolve) => blocker.once("listening", resolve));
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, TOOLGATE_STATE_DIR: stateDir, PORT: String(ports.app) };
    delete env.DATABASE_URL;
    const run = spawnSync("npm", ["run", "dev"], { env, encoding: "utf8", timeout: 60_000 });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`port ${ports.app}, for the app, is already in use by another program`);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  } finally {
    blocker.close();
  }
});
