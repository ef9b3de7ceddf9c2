"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { resolveUpstreamCallAction } from "@/lib/upstream/actions";
import { TimeAgo } from "@/components/ui/time-ago";
import { BusyButton } from "@/components/ui/busy-button";

export interface UnknownCall {
  toolCallId: string;
  toolName: string;
  sentAt: string | null;
  idempotencyKey: string;
}

/**
 * Upstream calls sent whose answer was lost (a timeout, a cut connection): toolgate never sends them again. A
 * supervisor checks the upstream system and says whether each was carried out.
 */
export function UnknownUpstreamCalls({ calls }: { calls: UnknownCall[] }) {
  const router = useRouter();
  const [message, setMessage] = useState<{ error: boolean; text: string } | null>(null);
  const [pending, startTransition] = useTransition();
  if (calls.length === 0) return null;

  function resolve(call: UnknownCall, done: boolean) {
    startTransition(async () => {
      const result = await resolveUpstreamCallAction({ call_id: call.toolCallId, done });
      setMessage(
        result.ok
          ? { error: false, text: `${call.toolName}: recorded as ${done ? "carried out" : "not carried out"}.` }
          : { error: true, text: result.message },
      );
      if (result.ok) router.refresh();
    });
  }

  return (
    <section aria-labelledby="upstream-unknown" data-testid="upstream-unknown">
      <h2 id="upstream-unknown">Upstream calls whose answer was lost</h2>
      <p className="muted">
        Each was sent once and its answer never came back; toolgate does not send it again. Check the upstream system
        (its idempotency key is below), then say whether it happened.
      </p>
      <ul>
        {calls.map((call) => (
          <li key={call.toolCallId} className="card">
            <strong>{call.toolName}</strong> sent {call.sentAt ? <TimeAgo iso={call.sentAt} /> : "at an unknown time"} ·
            key <code>{call.idempotencyKey.slice(0, 16)}</code> · call <code>{call.toolCallId}</code>
            <p className="actions">
              <BusyButton type="button" busy={pending} onClick={() => resolve(call, true)}>
                It happened
              </BusyButton>
              <BusyButton type="button" busy={pending} onClick={() => resolve(call, false)}>
                It did not happen
              </BusyButton>
            </p>
          </li>
        ))}
      </ul>
      {message && (
        <p role="status" className={message.error ? "error" : "ok"}>
          {message.text}
        </p>
      )}
    </section>
  );
}
