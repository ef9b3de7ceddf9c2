import { SignInPage } from "@/components/auth/sign-in-page";
import { safeReturnPath } from "@/lib/auth/guards";
import { ssoButtonFor } from "@/lib/auth/sso/settings";

export const metadata = { title: "Sign in" };

export default async function LoginPage({
  searchParams,
}: {
  searchParams: Promise<{ next?: string; password?: string; error?: string; sso?: string }>;
}) {
  const { next, password, error, sso } = await searchParams;
  return (
    <SignInPage
      returnTo={safeReturnPath(next)}
      passwordChanged={password === "changed"}
      error={error}
      ssoTenant={await ssoButtonFor(sso)}
    />
  );
}
