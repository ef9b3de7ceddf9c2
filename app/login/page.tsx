import { LoginForm } from "@/components/login-form";
import { safeReturnPath } from "@/lib/auth/guards";

export default async function LoginPage({ searchParams }: { searchParams: Promise<{ next?: string }> }) {
  const { next } = await searchParams;
  const returnTo = safeReturnPath(next);
  return (
    <main>
      <h1>Sign in to toolgate</h1>
      {returnTo !== "/" && <p className="muted">Sign in to continue to the page you opened.</p>}
      <LoginForm returnTo={returnTo} />
    </main>
  );
}
