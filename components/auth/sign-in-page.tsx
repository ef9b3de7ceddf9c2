import { LoginForm } from "./login-form";

/** The sign-in page: a note after a password change or when a page sent the person here, then the form. */
export function SignInPage({ returnTo, passwordChanged }: { returnTo: string; passwordChanged: boolean }) {
  return (
    <main id="main">
      <h1>Sign in to toolgate</h1>
      {passwordChanged && (
        <p className="ok" role="status">
          Your password is changed and every session of yours has ended. Sign in with the new password.
        </p>
      )}
      {returnTo !== "/" && <p className="muted">Sign in to continue to the page you opened.</p>}
      <LoginForm returnTo={returnTo} />
    </main>
  );
}
