"use client";

import { useState, useTransition } from "react";
import { setTimeZoneAction } from "@/lib/admin/rules/actions";
import { useStepUp } from "@/components/step-up/step-up-field";
import { BusyButton } from "@/components/ui/busy-button";
import { type Said, saidOf } from "@/components/ui/field";

/**
 * The time zone the rules' `context.hour` and `context.weekday` are read in; while the live rules read the time, a
 * change asks for the admin's step-up and waits for a second admin.
 */
export function TimeZoneForm({ current, hasPasskey }: { current: string; hasPasskey: boolean }) {
  const stepUp = useStepUp(hasPasskey);
  const [timeZone, setTimeZone] = useState(current);
  const [message, setMessage] = useState<Said>(null);
  const [pending, startTransition] = useTransition();
  const save = () =>
    startTransition(async () => {
      const response = await stepUp.run({ kind: "admin.time-zone", timeZone: timeZone.trim() }, (proofId) =>
        setTimeZoneAction({ timeZone, proofId }),
      );
      setMessage(saidOf(response, (data) => data.message));
    });
  return (
    <div className="actions">
      <label>
        Time zone for the rules&apos; time of day{" "}
        <input name="timeZone" value={timeZone} onChange={(event) => setTimeZone(event.target.value)} />
      </label>{" "}
      {stepUp.field}
      <BusyButton type="button" busy={pending} disabled={timeZone === current} onClick={save}>
        Save time zone
      </BusyButton>
      {message && (
        <span role="status" className={message.ok ? "ok" : "error"} data-testid="time-zone-message">
          {message.text}
        </span>
      )}
    </div>
  );
}
