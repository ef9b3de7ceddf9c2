import Link from "next/link";
import { FormMessages } from "@/components/ui/field";
import { LoginForm } from "./login-form";
import { ssoErrorWords, SsoSignIn } from "./sso-sign-in";

/** The sign-in page: a note after a password change or when a page sent the person here, then the tenant's single sign-on button (when the link named it) and the password form. */
export function SignInPage({
  returnTo,
  passwordChanged,
  error,
  ssoTenant,
}: {
  returnTo: string;
  passwordChanged: boolean;
  error?: string;
  ssoTenant: { id: string; displayName: string } | null;
}) {
  const ssoError = ssoErrorWords(error);
  return (
    <main id="main">
      <h1>Sign in to toolgate</h1>
      {passwordChanged && (
        <p className="ok" role="status">
          Your password is changed and every session of yours has ended. Sign in with the new password.
        </p>
      )}
      <FormMessages error={ssoError} />
      {returnTo !== "/" && <p className="muted">Sign in to continue to the page you opened.</p>}
      {ssoTenant && <SsoSignIn returnTo={returnTo} tenant={ssoTenant} />}
      <LoginForm returnTo={returnTo} />
      {!ssoTenant && (
        <p>
          <Link href={`/login/sso?next=${encodeURIComponent(returnTo)}`}>Use your company&apos;s single sign-on</Link>
        </p>
      )}
    </main>
  );
}
