"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { changePasswordAction } from "@/lib/auth/sign-in/actions";
import { Field, FormMessages } from "@/components/ui/field";
import { BusyButton } from "@/components/ui/busy-button";

/** Change your own password: the current one, then the new one twice. Every session ends, this one included. */
export function PasswordForm({ email, minLength }: { email: string; minLength: number }) {
  const router = useRouter();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [again, setAgain] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [pending, startTransition] = useTransition();

  function submit() {
    if (next !== again) {
      setError("The new password and its repetition differ: type the same password twice.");
      return;
    }
    startTransition(async () => {
      setError(null);
      const response = await changePasswordAction({ current, next });
      if (!response.ok) {
        setError(response.message);
        return;
      }
      // This session ended with the change: the sign-in page, and the navigation re-rendered as signed out.
      router.replace("/login?password=changed");
      router.refresh();
    });
  }

  return (
    <section className="card" aria-labelledby="password-title">
      <h2 id="password-title" style={{ marginTop: 0 }}>
        Password
      </h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <input type="email" name="username" autoComplete="username" value={email} readOnly hidden />
        <Field
          label="Current password"
          type="password"
          autoComplete="current-password"
          required
          value={current}
          onChange={(event) => setCurrent(event.target.value)}
        />
        <Field
          label={`New password (at least ${minLength} characters)`}
          type="password"
          autoComplete="new-password"
          required
          minLength={minLength}
          value={next}
          onChange={(event) => setNext(event.target.value)}
        />
        <Field
          label="New password again"
          type="password"
          autoComplete="new-password"
          required
          value={again}
          onChange={(event) => setAgain(event.target.value)}
        />
        <p className="muted">Changing it signs you out everywhere, here included.</p>
        <div className="actions">
          <BusyButton type="submit" className="primary" busy={pending}>
            {pending ? "Changing…" : "Change password"}
          </BusyButton>
        </div>
        <FormMessages error={error} />
      </form>
    </section>
  );
}
