"use client";

import { startRegistration } from "@simplewebauthn/browser";
import { useRouter } from "next/navigation";
import { useState, useSyncExternalStore } from "react";
import {
  passkeyRegistrationOptionsAction,
  registerPasskeyAction,
  removePasskeyAction,
} from "@/lib/auth/step-up/passkeys/actions";
import { TimeAgo } from "@/components/ui/time-ago";
import { namedAddress, passkeyFailure } from "@/components/step-up/passkey-words";
import { proveStepUp } from "@/components/step-up/step-up";
import { PasswordProof } from "@/components/step-up/step-up-field";
import type { StepUpWay } from "@/lib/auth/step-up/step-up";
import { BusyButton } from "@/components/ui/busy-button";
import type { Said } from "@/components/ui/field";

interface Passkey {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** The page's address does not change under it: nothing to subscribe to. */
const noChanges = () => () => {};

/**
 * A person's own passkeys: approving large refunds asks for one (step-up); without one, the password is asked again.
 * Adding or removing one first asks for a factor they already have (an existing passkey, else the password), and
 * the owner is emailed either way. In a tenant that requires single sign-on the password proves only the first
 * passkey, within 10 minutes of a sign-in through the provider (`stepUp`).
 */
export function PasskeyList({ passkeys, stepUp }: { passkeys: Passkey[]; stepUp: StepUpWay }) {
  const router = useRouter();
  const hasPasskey = passkeys.length > 0;
  const sso = !hasPasskey && stepUp.with === "passkey-needed" ? stepUp : null;
  const signInAgain = sso?.firstPasskey === "sign-in-again";
  // Said before the first try: browsers refuse a passkey on the address the app is first opened at.
  const named = useSyncExternalStore(
    noChanges,
    () => namedAddress(window.location),
    () => null,
  );
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [message, setMessage] = useState<Said>(null);
  const [busy, setBusy] = useState(false);
  const method = hasPasskey ? ({ passkey: true } as const) : ({ passkey: false, password } as const);

  async function run(work: () => Promise<string | null>, done: string) {
    setBusy(true);
    setMessage(null);
    try {
      const refused = await work();
      if (refused) return setMessage({ ok: false, text: refused });
      setName("");
      setPassword("");
      setMessage({ ok: true, text: done });
      router.refresh();
    } finally {
      setBusy(false);
    }
  }

  const register = () =>
    run(async () => {
      const proved = await proveStepUp({ kind: "passkey.enrol" }, method);
      if (!proved.ok) return proved.message;
      const options = await passkeyRegistrationOptionsAction({ proofId: proved.proofId });
      if (!options.ok) return options.message;
      let response;
      try {
        response = await startRegistration({ optionsJSON: options.data });
      } catch {
        return passkeyFailure(window.location);
      }
      const saved = await registerPasskeyAction({
        proofId: proved.proofId,
        response: response as unknown as Parameters<typeof registerPasskeyAction>[0]["response"],
        name: name || "Passkey",
      });
      return saved.ok ? null : saved.message;
    }, "Passkey added. Large approvals will ask for it; we emailed you about the change.");

  const remove = (key: Passkey) =>
    run(async () => {
      const proved = await proveStepUp({ kind: "passkey.remove", passkeyId: key.id }, method);
      if (!proved.ok) return proved.message;
      const removed = await removePasskeyAction({ proofId: proved.proofId, passkeyId: key.id });
      return removed.ok ? null : removed.message;
    }, `Passkey “${key.name}” removed; we emailed you about the change.`);

  return (
    <section className="card" aria-labelledby="passkeys-title">
      <h2 id="passkeys-title" style={{ marginTop: 0 }}>
        Passkeys
      </h2>
      {sso ? (
        <p className="muted">
          Your organization signs you in through {sso.provider.name}: approving a refund above your tenant&apos;s
          step-up amount asks for a passkey, not your password. Add your first one here.
        </p>
      ) : (
        <p className="muted">
          Approving a refund above your tenant&apos;s step-up amount asks for a passkey; without one, for your password
          again. Adding or removing a passkey asks for {hasPasskey ? "one of your passkeys" : "your password"} first.
        </p>
      )}
      {passkeys.length === 0 ? (
        <p data-testid="no-passkeys">No passkeys yet.</p>
      ) : (
        <ul data-testid="passkeys" className="passkeys">
          {passkeys.map((key) => (
            <li key={key.id}>
              <strong>{key.name}</strong> · added <TimeAgo iso={key.createdAt} /> ·{" "}
              {key.lastUsedAt ? (
                <>
                  last used <TimeAgo iso={key.lastUsedAt} />
                </>
              ) : (
                "never used"
              )}{" "}
              <BusyButton
                type="button"
                className="danger"
                onClick={() => void remove(key)}
                busy={busy}
                aria-label={`Remove passkey ${key.name}`}
              >
                Remove
              </BusyButton>
            </li>
          ))}
        </ul>
      )}
      {signInAgain ? (
        <p className="notice" data-testid="passkey-sign-in-again">
          To add your first passkey, sign in again through {sso.provider.name}, then add it here within 10 minutes.{" "}
          <a href={`/api/sso/start?tenant=${encodeURIComponent(sso.provider.tenantId)}&next=/settings`}>
            Sign in again through {sso.provider.name}
          </a>
        </p>
      ) : (
        !hasPasskey && <PasswordProof value={password} onChange={setPassword} testId="passkey-password" />
      )}
      {named && (
        <p className="notice" data-testid="passkey-needs-a-name">
          Passkeys need the app&apos;s name, not an IP address: open <a href={named}>{named}</a> and try there.
        </p>
      )}
      <p>
        <label>
          Name of the new passkey{" "}
          <input
            value={name}
            onChange={(event) => setName(event.target.value)}
            maxLength={60}
            placeholder="Work laptop"
            aria-describedby="passkey-name-help"
          />
        </label>{" "}
        <BusyButton
          type="button"
          className="primary"
          onClick={() => void register()}
          busy={busy}
          disabled={signInAgain}
        >
          Add a passkey
        </BusyButton>
      </p>
      <p id="passkey-name-help" className="muted small">
        Name it after the device or security key it lives on, so you know later which one to remove.
      </p>
      {message && (
        <p className={message.ok ? "" : "error"} role={message.ok ? "status" : "alert"} data-testid="passkey-message">
          {message.text}
        </p>
      )}
    </section>
  );
}
