import type { SessionUser } from "@/lib/auth/sign-in/auth";
import type { StepUpWay } from "@/lib/auth/step-up/step-up";
import type { CheckedRequest, consentingAgent } from "@/lib/oauth/consent/authorize";
import { SCOPE_WORDS } from "@/lib/oauth/consent/authorize-scopes";
import { FormMessages } from "@/components/ui/field";
import { ConsentForm } from "./consent-form";

/**
 * The consent page of MCP authorization: who asks, where it returns, as whom it will act, and what it may do; or, for
 * a request that cannot be answered to the client, what went wrong. `params` go back with the answer as they came.
 */
export function OAuthConsent({
  checked,
  agent,
  user,
  params,
  way,
  delegationDigest,
}: {
  /** A fault with a redirect URI never gets here: the page sends it back to the client. */
  checked: Exclude<CheckedRequest, { redirect: string }>;
  agent: Awaited<ReturnType<typeof consentingAgent>>;
  user: SessionUser;
  params: Record<string, string | undefined>;
  /** How this person proves a step-up in this session (`stepUpWayOf`). */
  way: StepUpWay;
  /** What the step-up for passing the refund permission on covers: this client's request. */
  delegationDigest: string;
}) {
  if (!checked.ok) {
    return (
      <main id="main">
        <h1>This connection cannot be made</h1>
        <p className="error" role="alert">
          {checked.message}
        </p>
        <p className="muted">Start the connection again from the client, or ask its maker to fix its settings.</p>
      </main>
    );
  }
  const { client, redirectUri, requestedScopes } = checked.request;
  const offered = (agent?.scopes ?? []).filter((scope) => requestedScopes.includes(scope));
  const blocked =
    !agent || agent.role !== "AGENT"
      ? "Only an agent can connect a client to act as them. Sign in as the agent this client should act as."
      : client.kind === "dcr" && !agent.dcrEnabled
        ? "Your admin has not allowed clients that register themselves. Ask them to turn it on under Policy and keys, or use a client with a metadata document."
        : offered.length === 0
          ? "You hold none of the permissions this client asks for."
          : null;
  const returnHost = new URL(redirectUri).host || new URL(redirectUri).protocol;
  return (
    <main id="main">
      <h1>Connect {client.name} to toolgate</h1>
      <section className="card" aria-labelledby="who">
        <h2 id="who">Who is asking</h2>
        <dl className="facts">
          <dt>Client</dt>
          <dd>{client.name}</dd>
          <dt>{client.kind === "cimd" ? "Metadata document" : "Registration"}</dt>
          <dd>
            {client.kind === "cimd" ? (
              <code>{client.id}</code>
            ) : (
              <>
                Registered itself; its name is not verified <span className="small muted">({client.id})</span>
              </>
            )}
          </dd>
          <dt>Returns to</dt>
          <dd>
            <strong>{returnHost}</strong> <span className="small muted">{redirectUri}</span>
          </dd>
          <dt>Acts as</dt>
          <dd>
            {agent ? `${agent.name} (${agent.email})` : user.email}, agent of {agent?.tenantName ?? "your tenant"}
          </dd>
        </dl>
      </section>
      <FormMessages error={blocked} />
      <ConsentForm
        params={params}
        offered={offered.map((scope) => ({ scope, words: SCOPE_WORDS[scope] }))}
        blocked={blocked !== null}
        way={way}
        delegationDigest={delegationDigest}
      />
    </main>
  );
}
