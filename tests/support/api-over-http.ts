// The agent API and next-auth's CSRF step of a running instance (tests/support/use-instances.ts), over HTTP: what
// api.ts does in process, for tests of the production build.

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

/** POST /api/v1/conversations about `customer`: the answer's status, Retry-After and body. */
export async function openOver(base: string, key: string, customer: string) {
  const response = await fetch(`${base}/api/v1/conversations`, {
    method: "POST",
    headers: auth(key),
    body: JSON.stringify({ customer_id: customer }),
  });
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    json: (await response.json()) as { id?: string; error?: { code: string } },
  };
}

/** The id of a conversation `key`'s agent opens about `customer`; throws when none is opened. */
export async function conversationOver(base: string, key: string, customer: string): Promise<string> {
  const opened = await openOver(base, key, customer);
  if (opened.status !== 201 || !opened.json.id) throw new Error(`no conversation opened: ${opened.status}`);
  return opened.json.id;
}

/** POST a tool call under a call key: the answer's status and body. */
export async function proposeOver(base: string, key: string, conversation: string, body: unknown, callKey: string) {
  const response = await fetch(`${base}/api/v1/conversations/${conversation}/tool-calls`, {
    method: "POST",
    headers: { ...auth(key), "idempotency-key": callKey },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    json: (await response.json()) as {
      id: string;
      code: string;
      kind: string;
      replayed?: boolean;
      approval?: { id: string; preview: { ceiling?: { name: string } } };
    },
  };
}

/** A CSRF token from next-auth and the cookie that carries it (joined to `cookie` when given), as a browser holds them. */
export async function csrfOf(base: string, cookie?: string): Promise<{ csrfToken: string; cookie: string }> {
  const response = await fetch(`${base}/api/auth/csrf`, cookie ? { headers: { cookie } } : {});
  if (response.status !== 200) throw new Error(`no CSRF token: ${response.status}`);
  const { csrfToken } = (await response.json()) as { csrfToken: string };
  const own = response.headers
    .getSetCookie()
    .map((line) => line.split(";")[0])
    .join("; ");
  return { csrfToken, cookie: cookie ? `${cookie}; ${own}` : own };
}

export interface SignInAnswer {
  status: number;
  retryAfter: string | null;
  cookie: string | null;
  body: string;
}

/** The browser's password sign-in: a CSRF token from next-auth, then the credentials form; `cookie` is the session's. */
export async function signInOver(
  base: string,
  email: string,
  password: string,
  headers: Record<string, string> = {},
): Promise<SignInAnswer> {
  const { csrfToken, cookie: csrfCookie } = await csrfOf(base);
  const response = await fetch(`${base}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: csrfCookie, ...headers },
    body: new URLSearchParams({ csrfToken, email, password, json: "true" }),
  });
  const session = response.headers.getSetCookie().find((cookie) => /^next-auth\.session-token=[^;]/.test(cookie));
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    cookie: session?.split(";")[0] ?? null,
    body: await response.text(),
  };
}
