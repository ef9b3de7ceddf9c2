"use client";

import { startRegistration } from "@simplewebauthn/browser";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { passkeyRegistrationOptionsAction, registerPasskeyAction } from "@/lib/approvals/passkey-actions";
import { TimeAgo } from "../ui/time-ago";
import { passkeyFailure } from "@/components/ui/passkey-words";

interface Passkey {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** A person's own passkeys: approving large refunds asks for one (step-up); without one, the password is asked again. */
export function PasskeyList({ passkeys }: { passkeys: Passkey[] }) {
  const router = useRouter();
  const [name, setName] = useState("");
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);

  async function register() {
    setBusy(true);
    setMessage(null);
    try {
      const options = await passkeyRegistrationOptionsAction({});
      if (!options.ok) return setMessage({ ok: false, text: options.message });
      let response;
      try {
        response = await startRegistration({ optionsJSON: options.data });
      } catch {
        return setMessage({ ok: false, text: passkeyFailure(window.location) });
      }
      const saved = await registerPasskeyAction({
        response: response as unknown as Parameters<typeof registerPasskeyAction>[0]["response"],
        name: name || "Passkey",
      });
      if (!saved.ok) return setMessage({ ok: false, text: saved.message });
      setName("");
      setMessage({ ok: true, text: "Passkey added. Large approvals will ask for it." });
      router.refresh();
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-labelledby="passkeys-title">
      <h2 id="passkeys-title" style={{ marginTop: 0 }}>
        Passkeys
      </h2>
      <p className="muted">
        Approving a refund above your tenant&apos;s step-up amount asks for a passkey; without one, for your password
        again.
      </p>
      {passkeys.length === 0 ? (
        <p data-testid="no-passkeys">No passkeys yet.</p>
      ) : (
        <ul data-testid="passkeys">
          {passkeys.map((key) => (
            <li key={key.id}>
              <strong>{key.name}</strong> · added <TimeAgo iso={key.createdAt} />
              {key.lastUsedAt && (
                <>
                  {" "}
                  · last used <TimeAgo iso={key.lastUsedAt} />
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <p>
        <label>
          Name{" "}
          <input value={name} onChange={(event) => setName(event.target.value)} maxLength={60} placeholder="Laptop" />
        </label>{" "}
        <button type="button" className="primary" onClick={() => void register()} disabled={busy}>
          Add a passkey
        </button>
      </p>
      {message && (
        <p className={message.ok ? "" : "error"} role={message.ok ? "status" : "alert"} data-testid="passkey-message">
          {message.text}
        </p>
      )}
    </section>
  );
}
