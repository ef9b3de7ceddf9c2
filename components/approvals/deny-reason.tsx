"use client";

import { useId } from "react";

/** The longest reason for a denial the server takes (lib/approvals/decision/actions.ts). */
export const MAX_REASON = 500;

/** What is wrong with a reason for denying, in words, or null when it can be sent. */
export function reasonProblem(reason: string): string | null {
  if (!reason.trim()) return "Say why you deny it: the agent reads this reason.";
  if (reason.length > MAX_REASON)
    return `Shorten the reason to ${MAX_REASON} characters (it has ${reason.length}): the agent reads it.`;
  return null;
}

/**
 * The reason a supervisor gives for denying. Nothing typed or pasted is cut silently: past 400 characters it counts
 * them, and past the limit it says so before anything is sent.
 */
export function DenyReason({
  label,
  value,
  onChange,
  rows,
  autoFocus,
  className,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  rows: number;
  autoFocus?: boolean;
  className?: string;
}) {
  const countId = useId();
  const over = value.length > MAX_REASON;
  return (
    <label className="field">
      {label}
      <textarea
        name="reason"
        rows={rows}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        autoFocus={autoFocus}
        className={className}
        aria-invalid={over || undefined}
        aria-describedby={countId}
      />
      <span id={countId} className={over ? "error" : "muted"} aria-live="polite" data-testid="reason-count">
        {value.length > 400 ? `${value.length} of at most ${MAX_REASON} characters` : ""}
      </span>
    </label>
  );
}
