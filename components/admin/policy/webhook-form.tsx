"use client";

import { useState, useTransition } from "react";
import { setWebhookAction } from "@/lib/admin/policy/actions";
import { useStepUp } from "@/components/step-up/step-up-field";
import { Field, SaidMessage, type Said, saidOf } from "@/components/ui/field";
import { BusyButton } from "@/components/ui/busy-button";
import { fillInFirst } from "@/lib/words";

/**
 * URL and secret are write-only: stored encrypted, never shown again. Setting them asks for the admin's step-up and
 * waits for a second admin (or the delay); removing applies at once.
 */
export function WebhookForm({ configured, hasPasskey }: { configured: boolean; hasPasskey: boolean }) {
  const stepUp = useStepUp(hasPasskey);
  const [url, setUrl] = useState("");
  const [secret, setSecret] = useState("");
  const [message, setMessage] = useState<Said>(null);
  const [pending, startTransition] = useTransition();

  function save(input: { url: string; secret: string } | null) {
    // Said before the step-up is asked for, not after it.
    const problem =
      input &&
      (fillInFirst([
        ["the URL", input.url],
        ["the signing secret", input.secret],
      ]) ??
        (input.secret.length < 16
          ? `The signing secret needs at least 16 characters; it has ${input.secret.length}.`
          : null));
    if (problem) return setMessage({ ok: false, text: problem });
    startTransition(async () => {
      const response = input
        ? await stepUp.run({ kind: "admin.webhook", url: input.url }, (proofId) =>
            setWebhookAction({ ...input, proofId }),
          )
        : await setWebhookAction(null);
      setMessage(saidOf(response, (data) => data.held ?? (input ? "Saved." : "Removed.")));
      if (response.ok) setSecret("");
    });
  }

  return (
    <div className="card">
      <p className="muted">
        {configured
          ? "A webhook is set. Its URL and secret are stored encrypted and are not shown; enter new ones to replace them."
          : "No webhook is set."}{" "}
        Each new approval request is posted there, signed with an HMAC of the secret.
      </p>
      <Field
        label="URL"
        name="webhookUrl"
        type="url"
        value={url}
        onChange={(event) => setUrl(event.target.value)}
        style={{ width: "100%" }}
      />
      <Field
        label="Signing secret (at least 16 characters)"
        name="webhookSecret"
        type="password"
        autoComplete="off"
        value={secret}
        onChange={(event) => setSecret(event.target.value)}
      />
      {stepUp.field}
      <BusyButton type="button" className="primary" busy={pending} onClick={() => save({ url, secret })}>
        Save webhook
      </BusyButton>{" "}
      {configured && (
        <BusyButton type="button" className="danger" busy={pending} onClick={() => save(null)}>
          Remove webhook
        </BusyButton>
      )}{" "}
      <SaidMessage said={message} />
    </div>
  );
}
