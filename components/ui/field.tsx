import type { InputHTMLAttributes } from "react";
import type { ActionResult } from "@/lib/auth/guards";

/** One labelled text input on its own line: the label above, the input below, clicking the label focuses it. */
export function Field({ label, ...input }: { label: string } & InputHTMLAttributes<HTMLInputElement>) {
  return (
    <p>
      <label>
        {label}
        <br />
        <input {...input} />
      </label>
    </p>
  );
}

/**
 * What a form says back: a problem, announced at once, and a notice (a change held for a second admin, a change made),
 * read when the reader gets there. Nothing when there is neither.
 */
export function FormMessages({
  error,
  notice,
  noticeTestId,
}: {
  error?: string | null;
  notice?: string | null;
  noticeTestId?: string;
}) {
  return (
    <>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {notice && (
        <p className="notice" role="status" data-testid={noticeTestId}>
          {notice}
        </p>
      )}
    </>
  );
}

/** What a form said last: a problem (`ok: false`, shown as an error) or what was done. */
export type Said = { ok: boolean; text: string } | null;

/** A server action's answer as what its form says: `done(data)` when it went through, else the action's message. */
export function saidOf<T>(response: ActionResult<T>, done: (data: T) => string): Said {
  return response.ok ? { ok: true, text: done(response.data) } : { ok: false, text: response.message };
}

/** `Said` as FormMessages shows it: a problem announced at once, what was done as a notice. */
export function SaidMessage({ said }: { said: Said }) {
  return <FormMessages error={said?.ok === false ? said.text : null} notice={said?.ok ? said.text : null} />;
}
