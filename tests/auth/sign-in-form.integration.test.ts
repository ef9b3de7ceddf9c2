import { NextRequest } from "next/server";
import { describe, expect, it, vi } from "vitest";
import { GET as authRead, POST as authRoute } from "@/app/api/auth/[...nextauth]/route";
import { db } from "@/lib/db";

// The sign-in route's reading of a request, through its handler: what the throttle counts must be what next-auth
// would authenticate. (tests/hardening/sign-in-bypass.test.ts tries the same tricks against the production build.)

const unique = () => `form-${Math.random().toString(36).slice(2)}@acme.test`;
const failures = async (email: string) =>
  (await db.signInThrottle.findUnique({ where: { key: `account:${email}` } }))?.failures ?? 0;

function post(path: string, body: string, type = "application/x-www-form-urlencoded", segments?: string[]) {
  return authRoute(
    new NextRequest(`http://127.0.0.1:3000${path}`, { method: "POST", headers: { "content-type": type }, body }),
    // Next.js hands the route its path segments decoded.
    { params: Promise.resolve({ nextauth: segments ?? path.split("/").slice(3).map(decodeURIComponent) }) },
  );
}

function read(path: string, headers: Record<string, string> = {}) {
  const url = new URL(`http://127.0.0.1:3000${path}`);
  return authRead(new NextRequest(url, { headers }), {
    params: Promise.resolve({ nextauth: url.pathname.split("/").slice(3).map(decodeURIComponent) }),
  });
}

describe("next-auth's reads", () => {
  it("a read of the callback is a 405 in words, not next-auth's 500", async () => {
    for (const path of ["/api/auth/callback/credentials", "/api/auth/callback/%63redentials"]) {
      const response = await read(path);
      expect([path, response.status, response.headers.get("allow")]).toEqual([path, 405, "POST"]);
      expect(await response.json()).toEqual({
        error: { code: "request.method-not-allowed", message: "sign in by posting the sign-in form" },
      });
    }
  });
});

describe("sign-in form reading", () => {
  it("refuses a repeated field before anything is counted or checked", async () => {
    const [first, last] = [unique(), unique()];
    for (const body of [
      `email=${first}&email=${last}&password=x`,
      `email=${first}&password=x&password=y`,
      `csrfToken=a&csrfToken=b&email=${first}&password=x`,
    ]) {
      const response = await post("/api/auth/callback/credentials", body);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: "request.repeated-field" } });
    }
    expect([await failures(first), await failures(last)]).toEqual([0, 0]);
  });

  it("refuses any content type but a plain form, however it mentions one", async () => {
    const email = unique();
    for (const type of [
      "application/x-www-form-urlencoded; x=application/json",
      "application/x-www-form-urlencoded, application/json",
      "application/json",
      "multipart/form-data; boundary=x",
    ]) {
      const response = await post("/api/auth/callback/credentials", JSON.stringify({ email, password: "x" }), type);
      expect([type, response.status]).toEqual([type, 415]);
    }
    expect(await failures(email)).toBe(0);
  });

  it("throttles the credentials callback however its path is encoded, and refuses a segment next-auth cannot mean", async () => {
    const email = unique();
    await db.signInThrottle.create({
      data: { key: `account:${email}`, failures: 4, lockedUntil: new Date(Date.now() + 60_000) },
    });
    const form = new URLSearchParams({ email, password: "right-or-wrong" }).toString();
    for (const path of ["/api/auth/callback/%63redentials", "/api/auth/%63allback/credentials"]) {
      const response = await post(path, form);
      expect([path, response.status]).toEqual([path, 429]);
    }
    const slashed = await post("/api/auth/x", form, undefined, ["callback/credentials"]);
    expect(slashed.status).toBe(404);
  });

  it("refuses a form larger than a sign-in needs with 413", async () => {
    const response = await post("/api/auth/callback/credentials", `email=${unique()}&password=${"x".repeat(20_000)}`);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: "request.too-large" } });
  });

  it("takes a browser's log report without writing a stranger's words into the operators' log", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const written = vi.spyOn(process.stdout, "write");
    const response = await post(
      "/api/auth/_log",
      new URLSearchParams({ code: "ADMIN_PASSWORD_LEAKED", level: "error", message: "call +1 555 0100" }).toString(),
    );
    expect(response.status).toBe(204);
    const lines = [...logged.mock.calls, ...written.mock.calls].map(([line]) => String(line)).join("\n");
    expect(lines).not.toContain("admin_password_leaked");
    expect(lines).not.toContain("555 0100");
    logged.mockRestore();
    written.mockRestore();
  });
});
