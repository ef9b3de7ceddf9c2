/** What each refusal of a single sign-on means to the person, and what to do. */
const SSO_ERRORS: Record<string, string> = {
  "sso.invalid-request": "Enter your work email to sign in through your company's identity provider.",
  "sso.not-configured": "Your company has not set up single sign-on here. Sign in with your password.",
  "sso.no-attempt": "That sign-in was started in another browser or more than 10 minutes before. Start it again here.",
  "sso.provider-refused":
    "Your identity provider did not sign you in. Ask your administrator if your account is active.",
  "sso.invalid-response": "Your identity provider's answer did not check out. Start the sign-in again.",
  "sso.provider-unreachable": "Your identity provider could not be reached. Try again in a moment.",
  "sso.unverified-email":
    "Your identity provider has not verified your email, so it cannot be matched to your account. Ask your administrator to verify it or to invite you.",
  "sso.email-mismatch":
    "Your identity provider gave two different email addresses for you, so it cannot be matched to your account. Ask your administrator to correct your email at the provider.",
  "sso.unknown-person": "No account here matches your email. Ask your administrator to add you.",
  "sso.deactivated": "Your account here is deactivated. Ask your administrator.",
  "sso.failed": "Something went wrong on our side; nothing was signed in. Try again.",
  "sso.no-role": "Your groups at the identity provider give you no role here. Ask your administrator.",
};

export const ssoErrorWords = (code: string | undefined) => (code ? SSO_ERRORS[code] : undefined);

/**
 * Sign-in through the company's identity provider. The button is a link, not a form: the page's CSP lets a form
 * answer only to this site, and the start route answers with a redirect to the provider. Without a tenant, a GET form
 * asks for the work email and this page finds the tenant by its domain.
 */
export function SsoSignIn({
  returnTo,
  tenant,
}: {
  returnTo: string;
  tenant: { id: string; displayName: string } | null;
}) {
  if (tenant)
    return (
      <p>
        <a
          className="button-link"
          href={`/api/sso/start?${new URLSearchParams({ tenant: tenant.id, next: returnTo })}`}
        >
          Sign in with {tenant.displayName}
        </a>
      </p>
    );
  return (
    <form method="get" action="/login/sso" className="card" style={{ maxWidth: 360 }}>
      <input type="hidden" name="next" value={returnTo} />
      <p>
        <label>
          Work email
          <br />
          <input name="email" type="email" autoComplete="username" required style={{ width: "100%" }} />
        </label>
      </p>
      <button className="primary" type="submit">
        Find my company&apos;s sign-in
      </button>
    </form>
  );
}
