import { SsoSignIn } from "@/components/auth/sso-sign-in";
import { safeReturnPath } from "@/lib/auth/guards";

export const metadata = { title: "Single sign-on" };

export default async function SsoLoginPage({ searchParams }: { searchParams: Promise<{ next?: string }> }) {
  const { next } = await searchParams;
  return (
    <main id="main">
      <h1>Sign in through your company</h1>
      <p className="muted">Your email&apos;s domain tells us which identity provider to send you to.</p>
      <SsoSignIn returnTo={safeReturnPath(next)} tenant={null} />
    </main>
  );
}
