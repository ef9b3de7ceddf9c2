// The browser's cookie for tests that call server actions as a signed-in person: the test puts a real session
// cookie (`sessionCookie`) in `jar`, and `next/headers`, mocked with `nextHeadersMock`, reads it as a request would.
// A test file mocks it with
//   vi.mock("next/headers", async () => (await import("./cookie-jar")).nextHeadersMock());

export const jar = { cookie: "" };

export const nextHeadersMock = () => ({
  cookies: async () => ({
    get: (name: string) =>
      jar.cookie.startsWith(`${name}=`) ? { value: jar.cookie.slice(name.length + 1) } : undefined,
  }),
  headers: async () => new Headers(),
});
