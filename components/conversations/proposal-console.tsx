"use client";

import { useRef, useState, useTransition } from "react";
import { proposeAction } from "@/lib/agent-api/actions";
import { BusyButton } from "@/components/ui/busy-button";

const EXAMPLE = '{"name":"get_order","arguments":{"order_id":"ord_1001"}}';

export function ProposalConsole({ conversationId }: { conversationId: string }) {
  // Uncontrolled: what a person types before the page has hydrated stays as typed (a controlled field was merged
  // with the example when hydration caught up), and is read when they press Propose.
  const envelope = useRef<HTMLTextAreaElement>(null);
  const callKey = useRef<HTMLInputElement>(null);
  const [answer, setAnswer] = useState<string | null>(null);
  const [empty, setEmpty] = useState(false);
  const [pending, startTransition] = useTransition();

  function submit() {
    const sent = { conversationId, envelope: envelope.current?.value ?? "", callKey: callKey.current?.value ?? "" };
    // Nothing typed is no proposal: said here, not sent through the sequence and recorded as a refused call.
    const blank = !sent.envelope.trim();
    setEmpty(blank);
    if (blank) {
      setAnswer(null);
      envelope.current?.focus();
      return;
    }
    startTransition(async () => {
      const response = await proposeAction(sent);
      setAnswer(
        JSON.stringify(response.ok ? response.data : { error: response.code, message: response.message }, null, 2),
      );
    });
  }

  return (
    <div className="card console">
      <h2 style={{ marginTop: 0 }}>Propose a tool call</h2>
      <p className="muted">
        The raw envelope goes through the same sequence as the agent API. A write may carry a call key: send the same
        key again and you get the first answer back, never a second effect.
      </p>
      <label>
        Envelope (the tool call as JSON: its name and arguments)
        <textarea
          ref={envelope}
          defaultValue={EXAMPLE}
          rows={5}
          style={{ width: "100%", fontFamily: "ui-monospace, monospace" }}
          aria-invalid={empty || undefined}
          aria-describedby={empty ? "console-empty" : undefined}
        />
      </label>
      {empty && (
        <p id="console-empty" className="error" role="alert">
          Write the tool call first, for example {EXAMPLE}
        </p>
      )}
      <p>
        <label>
          Call key (for writes; optional)
          <br />
          <input placeholder="for example demo-1" style={{ width: "min(100%, 22rem)" }} ref={callKey} />
        </label>{" "}
        <BusyButton type="button" className="primary" busy={pending} onClick={submit}>
          {pending ? "Sending…" : "Propose"}
        </BusyButton>
      </p>
      {answer && (
        <>
          <p className="muted">
            The answer an agent would have got when it proposed; the call&apos;s row in the list above follows what
            happens next (an approval, a denial, the provider&apos;s answer).
          </p>
          <pre data-testid="console-answer" style={{ whiteSpace: "pre-wrap" }}>
            {answer}
          </pre>
        </>
      )}
    </div>
  );
}
