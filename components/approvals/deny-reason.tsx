"use client";

import { useId } from "react";
import { MAX_DENY_REASON, MODEL_NOTE_MAX } from "@/lib/approvals/words";

/** What is wrong with a reason for denying, in words, or null when it can be sent. */
export function reasonProblem(reason: string): string | null {
  if (!reason.trim()) return "Say why you deny it: the agent reads this reason.";
  if (reason.length > MAX_DENY_REASON)
    return `Shorten the reason to ${MAX_DENY_REASON} characters (it has ${reason.length}): the agent reads it.`;
  return null;
}

/**
 * The reason a supervisor gives for denying. Nothing typed or pasted is cut silently: past the part the agent reads
 * it counts the characters and says so, and past the limit it says so before anything is sent.
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
  const over = value.length > MAX_DENY_REASON;
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
        {value.length > MODEL_NOTE_MAX
          ? `${value.length} of at most ${MAX_DENY_REASON} characters; the agent reads the first ${MODEL_NOTE_MAX}, the history keeps all`
          : ""}
      </span>
    </label>
  );
}
