import { SignInPage } from "@/components/auth/sign-in-page";
import { safeReturnPath } from "@/lib/auth/guards";

export const metadata = { title: "Sign in" };

export default async function LoginPage({
  searchParams,
}: {
  searchParams: Promise<{ next?: string; password?: string }>;
}) {
  const { next, password } = await searchParams;
  return <SignInPage returnTo={safeReturnPath(next)} passwordChanged={password === "changed"} />;
}
