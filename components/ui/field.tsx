import type { InputHTMLAttributes } from "react";

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
