import { LoginForm } from "@/components/login-form";
import { safeReturnPath } from "@/lib/auth/guards";

export default async function LoginPage({
  searchParams,
}: {
  searchParams: Promise<{ next?: string; password?: string }>;
}) {
  const { next, password } = await searchParams;
  const returnTo = safeReturnPath(next);
  return (
    <main>
      <h1>Sign in to toolgate</h1>
      {password === "changed" && (
        <p className="ok" role="status">
          Your password is changed and every session of yours has ended. Sign in with the new password.
        </p>
      )}
      {returnTo !== "/" && <p className="muted">Sign in to continue to the page you opened.</p>}
      <LoginForm returnTo={returnTo} />
    </main>
  );
}
