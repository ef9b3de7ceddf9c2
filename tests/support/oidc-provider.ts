import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

// A real OpenID Connect provider (oidc-provider, with its development login and consent pages) for the single
// sign-on tests: people are accounts named by their `sub`, each with an email that is verified or not and groups,
// and an account marked disabled is one the provider refuses to sign in (and no longer issues anything for). The
// ID token carries the same claims as userinfo (as Google's and Entra's do), unless an account's `userinfo` says
// what its userinfo answers differently.

export interface Account {
  email: string;
  emailVerified: boolean;
  name?: string;
  groups?: string[];
  disabled?: boolean;
  /** What the userinfo endpoint says instead of the ID token; a claim left out (undefined) is not sent there. */
  userinfo?: { email?: string; emailVerified?: boolean };
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, Account>;
  close(): Promise<void>;
}

export async function startTestProvider(options: {
  redirectUris: string[];
  port?: number;
  clientId?: string;
  clientSecret?: string;
}): Promise<TestProvider> {
  const accounts = new Map<string, Account>();
  const clientId = options.clientId ?? "toolgate";
  const clientSecret = options.clientSecret ?? "a-test-client-secret-of-some-length";
  let provider: Provider | null = null;
  const server: Server = createServer((request, response) => {
    if (!provider) return response.writeHead(503).end();
    return provider.callback()(request, response);
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    pkce: { required: () => true },
    conformIdTokenClaims: false,
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "groups"] },
    cookies: { keys: ["test-provider-cookie-key"] },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, sub) {
      const account = accounts.get(sub);
      if (!account || account.disabled) return undefined;
      return {
        accountId: sub,
        claims: async (use: string) => ({
          sub,
          ...(use === "userinfo" && account.userinfo
            ? { email: account.userinfo.email, email_verified: account.userinfo.emailVerified }
            : { email: account.email, email_verified: account.emailVerified }),
          name: account.name ?? sub,
          groups: account.groups ?? [],
        }),
      };
    },
  });
  // A disabled account's sign-in ends as a real provider ends it: back to the client with `access_denied`.
  provider.use(async (ctx, next) => {
    if (ctx.method !== "POST" || !/^\/interaction\/[^/]+$/.test(ctx.path)) return next();
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString();
    const form = new URLSearchParams(text);
    if (form.get("prompt") === "login" && accounts.get(form.get("login") ?? "")?.disabled) {
      ctx.respond = false;
      return provider!.interactionFinished(
        ctx.req,
        ctx.res,
        { error: "access_denied", error_description: "the account is disabled" },
        { mergeWithLastSubmission: false },
      );
    }
    (ctx.req as typeof ctx.req & { body?: string }).body = text;
    return next();
  });
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * For a test file that signs in through toolgate's own SSO routes: the app's origin and next-auth secret set, a
 * provider that sends the browser back to the app's callback, and that provider's loopback host let past the outbound
 * check (lib/security/outbound.ts).
 */
export async function startProviderForApp(app: string, nextAuthSecret: string): Promise<TestProvider> {
  Object.assign(process.env, { NEXTAUTH_URL: app, NEXTAUTH_SECRET: nextAuthSecret });
  const provider = await startTestProvider({ redirectUris: [`${app}/api/sso/callback`] });
  process.env.OUTBOUND_ALLOWED_HOSTS = [process.env.OUTBOUND_ALLOWED_HOSTS, new URL(provider.issuer).host]
    .filter(Boolean)
    .join(",");
  return provider;
}

/**
 * Drives the provider's own pages over HTTP as a browser would, from the authorization URL to the redirect back to
 * toolgate: signs in as `login`, consents, and returns the URL the provider sends the browser to. A provider that
 * asks for the sign-in again after it was given (the account is disabled) is abandoned through its abort link,
 * which answers toolgate with `access_denied`.
 */
export async function signInAtProvider(authorizationUrl: string, login: string, appOrigin: string): Promise<string> {
  const cookies = new Map<string, string>();
  const send = async (url: string, init: RequestInit = {}) => {
    const response = await fetch(url, {
      ...init,
      redirect: "manual",
      headers: {
        ...(init.headers as Record<string, string>),
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; "),
      },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const [name, ...value] = pair.split("=");
      cookies.set(name, value.join("="));
    }
    return response;
  };
  let url = authorizationUrl;
  let logins = 0;
  for (let step = 0; step < 20; step++) {
    if (url.startsWith(appOrigin)) return url;
    const response = await send(url);
    if (response.status >= 300 && response.status < 400) {
      url = new URL(response.headers.get("location")!, url).href;
      continue;
    }
    const page = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
    if (!action || !prompt)
      throw new Error(`the provider answered ${response.status} without a form: ${page.slice(0, 300)}`);
    const target = new URL(action.replace(/&amp;/g, "&"), url).href;
    if (prompt === "login" && ++logins > 1) {
      url = `${target}/abort`;
      continue;
    }
    const body = new URLSearchParams(prompt === "login" ? { prompt, login, password: "any" } : { prompt });
    const submitted = await send(target, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: body.toString(),
    });
    url = new URL(submitted.headers.get("location") ?? target, target).href;
  }
  throw new Error("the provider never sent the browser back to toolgate");
}
