import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { csrfOf } from "../support/api-over-http";
import { createSignInWorld, signInEmail, type World } from "../support/world";
import { ownInstances } from "../support/own-instances";

// The sign-in throttle against someone guessing one person's password who knows how next-auth reads a request:
// the last of a repeated field, the decoded path, a JSON body behind a content type that merely mentions JSON.
// Every trick is sent as raw HTTP to the production build; none may sign in past the throttle or escape its count.

const PASSWORD = "correct horse battery staple";
const [app] = ownInstances(1);
let world: World;

beforeAll(async () => {
  world = await createSignInWorld(PASSWORD, { autoLimitCents: 1000 });
});

beforeEach(async () => {
  await db.signInThrottle.deleteMany({ where: { key: { startsWith: "address:" } } });
});

interface Answer {
  status: number;
  session: boolean;
  body: string;
}

/** A CSRF token and its cookie from next-auth, then one raw POST: the path and body exactly as given. */
async function post(path: string, body: (csrfToken: string) => string, contentType: string): Promise<Answer> {
  const { csrfToken, cookie } = await csrfOf(app.url);
  const response = await fetch(`${app.url}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": contentType, cookie },
    body: body(csrfToken),
  });
  return {
    status: response.status,
    session: response.headers.getSetCookie().some((value) => /^next-auth\.session-token=[^;]/.test(value)),
    body: await response.text(),
  };
}

const FORM = "application/x-www-form-urlencoded";
const form = (fields: [string, string][]) => (csrfToken: string) =>
  new URLSearchParams([["csrfToken", csrfToken], ...fields, ["json", "true"]]).toString();
const signIn = (path: string, who: string, password: string) =>
  post(
    path,
    form([
      ["email", who],
      ["password", password],
    ]),
    FORM,
  );
const failures = async (who: string) =>
  (await db.signInThrottle.findUnique({ where: { key: `account:${who}` } }))?.failures ?? 0;

// Paths that name the credentials callback to next-auth once decoded; the throttle must see each as that route.
const ENCODED_PATHS = [
  "/api/auth/callback/%63redentials",
  "/api/auth/%63allback/credentials",
  "/api/auth/callback/%63%72%65%64%65%6e%74%69%61%6c%73",
  "/api/auth/callback/credentials?email=someone-else%40acme.test",
];
// Paths that do not reach the credentials callback at all: refused or redirected, never a session.
const OTHER_PATHS = [
  "/api/auth/callback%2Fcredentials",
  "/api/auth/callback%2fcredentials",
  "/api/auth/callback/CREDENTIALS",
  "/api/auth/callback/credentials/",
  "/api/auth//callback/credentials",
  "/api/auth/callback/credentials%00",
];

describe("sign-in throttle bypasses", () => {
  it("counts every encoding of the credentials path against the account, then locks them all, even to the right password", async () => {
    const who = signInEmail(world.users.supervisor);
    const answers: number[] = [];
    for (const path of ENCODED_PATHS) answers.push((await signIn(path, who, "wrong")).status);
    expect(answers).toEqual([401, 401, 401, 401]);
    expect(await failures(who)).toBe(4);
    for (const path of ["/api/auth/callback/credentials", ...ENCODED_PATHS, ...OTHER_PATHS]) {
      const answer = await signIn(path, who, PASSWORD);
      expect([path, answer.session]).toEqual([path, false]);
      expect([path, answer.status >= 300 && answer.status < 500 && answer.status !== 401]).toEqual([path, true]);
      if (ENCODED_PATHS.includes(path)) expect([path, answer.status]).toEqual([path, 429]);
    }
  }, 60_000);

  it("refuses a repeated field, so the throttle and next-auth can never read different accounts", async () => {
    const victim = signInEmail(world.users.otherSupervisor);
    const decoy = `decoy-${world.tenantId}@acme.test`;
    for (let attempt = 0; attempt < 4; attempt++) await signIn("/api/auth/callback/credentials", victim, "wrong");
    expect((await signIn("/api/auth/callback/credentials", victim, PASSWORD)).status).toBe(429);
    const tricks: [string, string][][] = [
      [
        ["email", decoy],
        ["email", victim],
        ["password", PASSWORD],
      ],
      [
        ["email", victim],
        ["email", decoy],
        ["password", PASSWORD],
      ],
      [
        ["email", victim],
        ["password", "wrong"],
        ["password", PASSWORD],
      ],
    ];
    for (const fields of tricks) {
      const answer = await post("/api/auth/callback/%63redentials", form(fields), FORM);
      expect(answer.session).toBe(false);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "request.repeated-field" } });
    }
    expect(await failures(decoy)).toBe(0);
  }, 60_000);

  it("refuses a content type that would make next-auth read JSON, whatever the form type around it", async () => {
    const who = signInEmail(world.users.admin);
    const json = (csrfToken: string) => JSON.stringify({ csrfToken, email: who, password: PASSWORD, json: "true" });
    for (const type of [
      "application/x-www-form-urlencoded; x=application/json",
      "application/x-www-form-urlencoded;application/json",
      "application/json; x=application/x-www-form-urlencoded",
      "application/json",
      "text/plain",
    ]) {
      const answer = await post("/api/auth/callback/credentials", json, type);
      expect([type, answer.status, answer.session]).toEqual([type, 415, false]);
    }
    expect(await failures(who)).toBe(0);
    const plain = await post(
      "/api/auth/callback/credentials",
      form([
        ["email", who],
        ["password", PASSWORD],
      ]),
      "application/x-www-form-urlencoded; charset=UTF-8",
    );
    expect([plain.status, plain.session]).toEqual([200, true]);
  }, 60_000);
});

describe("a callback URL next-auth would refuse", () => {
  it("is dropped from the query or its cookie, not answered with a 500; the cookie is cleared and one to this site kept", async () => {
    const read = (path: string, cookie?: string) =>
      fetch(`${app.url}${path}`, { redirect: "manual", headers: cookie ? { cookie } : {} });
    for (const path of ["/api/auth/session", "/api/auth/csrf", "/api/auth/providers"]) {
      const answer = await read(path, "next-auth.callback-url=javascript%3Aalert(1)");
      expect([path, answer.status]).toEqual([path, 200]);
      expect(answer.headers.getSetCookie().some((value) => /^next-auth\.callback-url=;/.test(value))).toBe(true);
    }
    const signIn = await read("/api/auth/signin?callbackUrl=javascript:alert(1)");
    expect(signIn.status).toBe(302);
    expect(signIn.headers.get("location")).not.toContain("javascript");
    const kept = await read(`/api/auth/signin?callbackUrl=${encodeURIComponent("/approvals")}`);
    expect(kept.status).toBe(302);
    expect(decodeURIComponent(kept.headers.get("location")!)).toBe(`/login?callbackUrl=${app.url}/approvals`);
    const posted = await read("/api/auth/callback/credentials");
    expect([posted.status, posted.headers.get("allow")]).toEqual([405, "POST"]);
  });
});
