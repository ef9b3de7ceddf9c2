import { SsoSignIn } from "@/components/auth/sso-sign-in";
import { safeReturnPath } from "@/lib/auth/guards";
import { ssoButtonForEmail } from "@/lib/auth/sso/settings";

export const metadata = { title: "Single sign-on" };

export default async function SsoLoginPage({
  searchParams,
}: {
  searchParams: Promise<{ next?: string; email?: string }>;
}) {
  const { next, email } = await searchParams;
  const tenant = await ssoButtonForEmail(email);
  return (
    <main id="main">
      <h1>Sign in through your company</h1>
      {email && !tenant ? (
        <p className="error" role="alert">
          No single sign-on is set up for that email&apos;s domain. Check the address, or sign in with your password.
        </p>
      ) : (
        <p className="muted">Your email&apos;s domain tells us which identity provider to send you to.</p>
      )}
      <SsoSignIn returnTo={safeReturnPath(next)} tenant={tenant} />
    </main>
  );
}
