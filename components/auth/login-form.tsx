"use client";

import { signIn } from "next-auth/react";
import { useState, useSyncExternalStore } from "react";
import { absoluteTime } from "@/components/ui/time-words";
import { relativeTime } from "@/lib/words";
import { Field, FormMessages } from "@/components/ui/field";
import { BusyButton } from "@/components/ui/busy-button";

/** What the person may do next; it never says whether the account exists. */
function failureMessage(error: string | null): string {
  if (error === "sso-required")
    return "Your company signs in through its identity provider: use single sign-on above. Passwords are turned off.";
  const throttled = /^throttled:(\d+)$/.exec(error ?? "");
  if (!throttled)
    return "Wrong email or password. Check both and try again; after a few wrong tries, sign-in pauses briefly.";
  const seconds = Number(throttled[1]);
  const now = Date.now();
  const at = new Date(now + seconds * 1000).toISOString();
  return `Too many sign-in attempts. Try again ${relativeTime(at, now)} (after ${absoluteTime(at)}).`;
}

export function LoginForm({ returnTo }: { returnTo: string }) {
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  // The form signs in through script: until the page is hydrated a press of the button would do nothing, so it waits.
  const hydrated = useSyncExternalStore(
    () => () => {},
    () => true,
    () => false,
  );

  async function submit(form: FormData) {
    setPending(true);
    setError(null);
    const result = await signIn("credentials", {
      email: String(form.get("email") ?? ""),
      password: String(form.get("password") ?? ""),
      redirect: false,
    });
    if (!result || result.error) {
      setPending(false);
      setError(failureMessage(result?.error ?? null));
      return;
    }
    // A whole page load under the new session: a client navigation plus a refresh sent two requests for the page at
    // once, and the router dropped one mid-stream, which the server logs as an error.
    window.location.assign(returnTo);
  }

  return (
    // Submitted by script, not as a form action: an action resets the fields when it ends, which would empty the
    // email after a wrong password (and could race a quick retyping). POST, so no password ever lands in a URL.
    <form
      method="post"
      onSubmit={(event) => {
        event.preventDefault();
        void submit(new FormData(event.currentTarget));
      }}
      className="card"
      style={{ maxWidth: 360 }}
    >
      <Field label="Email" name="email" type="email" autoComplete="username" required style={{ width: "100%" }} />
      <Field
        label="Password"
        name="password"
        type="password"
        autoComplete="current-password"
        required
        style={{ width: "100%" }}
      />
      <FormMessages error={error} />
      <BusyButton className="primary" type="submit" busy={pending} disabled={!hydrated}>
        {pending ? "Signing in…" : "Sign in"}
      </BusyButton>
    </form>
  );
}
