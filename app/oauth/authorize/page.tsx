import { redirect } from "next/navigation";
import { OAuthConsent } from "@/components/oauth/consent";
import { headers } from "next/headers";
import { issuerFor } from "@/lib/auth/keys/access-tokens";
import { currentSession } from "@/lib/auth/sign-in/auth";
import { stepUpWayOf } from "@/lib/auth/step-up/step-up";
import { checkAuthorizationRequest, consentingAgent, delegationDigest } from "@/lib/oauth/consent/authorize";
import { fetchMetadataDocument } from "@/lib/oauth/clients/fetch-document";

export const metadata = { title: "Connect a client" };

export const dynamic = "force-dynamic";

const PASSED_ON = [
  "response_type",
  "client_id",
  "redirect_uri",
  "code_challenge",
  "code_challenge_method",
  "state",
  "scope",
  "resource",
] as const;

export default async function AuthorizePage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const raw = await searchParams;
  const params: Record<string, string | undefined> = {};
  for (const name of PASSED_ON) {
    const value = raw[name];
    params[name] = Array.isArray(value) ? undefined : value;
  }
  const query = new URLSearchParams(
    Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined),
  ).toString();
  const signedIn = await currentSession();
  if (!signedIn) redirect(`/login?next=${encodeURIComponent(`/oauth/authorize?${query}`)}`);

  const { user, sessionId } = signedIn;
  const issuer = issuerFor((await headers()).get("host"));
  const checked = await checkAuthorizationRequest(params, issuer, fetchMetadataDocument, user.id);
  // RFC 6749 §4.1.2.1: a fault the client can be told of goes back to it, not to a page it never sees.
  if (!checked.ok && checked.redirect !== null) redirect(checked.redirect);
  const agent = checked.ok ? await consentingAgent(user) : null;
  const digest = checked.ok ? delegationDigest(checked.request.client.id, checked.request.codeChallenge) : "";
  return (
    <OAuthConsent
      checked={checked}
      agent={agent}
      user={user}
      params={params}
      way={await stepUpWayOf(user.id, sessionId)}
      delegationDigest={digest}
    />
  );
}
