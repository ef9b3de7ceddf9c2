"use client";

import { useState, useTransition } from "react";
import { useStepUp } from "@/components/step-up/step-up-field";
import { inviteToSsoAction, removeSsoSettingsAction, saveSsoSettingsAction } from "@/lib/admin/access/actions";
import type { SsoSettingsView } from "@/lib/auth/sso/settings";
import { Field, SaidMessage, type Said, saidOf } from "@/components/ui/field";
import { BusyButton } from "@/components/ui/busy-button";
import { count, fillInFirst } from "@/lib/words";

type Mapping = { group: string; role: "SUPERVISOR" | "ADMIN" };

/** "group = ROLE" lines, as the admin types them, to the mapping the action takes; null when a line is not one. */
function parseMapping(text: string): Mapping[] | null {
  const lines = text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  const mapping = lines.map((line) => /^(.+?)\s*=\s*(SUPERVISOR|ADMIN)$/i.exec(line));
  if (mapping.some((match) => !match)) return null;
  return mapping.map((match) => ({ group: match![1], role: match![2].toUpperCase() as Mapping["role"] }));
}

/**
 * The tenant's OpenID provider. The client secret is write-only: stored encrypted, never shown again; saving asks for
 * the admin's step-up. Requiring single sign-on turns passwords off for everyone but admins, whose password sign-ins
 * stay possible (break-glass) and are each recorded, and ends every session a password signed in, the admin's own
 * included: the form says so before it is saved.
 */
export function SsoForm({ settings, hasPasskey }: { settings: SsoSettingsView | null; hasPasskey: boolean }) {
  const stepUp = useStepUp(hasPasskey);
  const [form, setForm] = useState({
    displayName: settings?.displayName ?? "",
    issuer: settings?.issuer ?? "",
    clientId: settings?.clientId ?? "",
    clientSecret: "",
    emailDomain: settings?.emailDomain ?? "",
    groupsClaim: settings?.groupsClaim ?? "",
    roleMap: Object.entries(settings?.roleMap ?? {})
      .map(([group, role]) => `${group} = ${role}`)
      .join("\n"),
    required: settings?.required ?? false,
  });
  const [message, setMessage] = useState<Said>(null);
  const [pending, startTransition] = useTransition();
  const set = (name: keyof typeof form) => (event: { target: { value: string } }) =>
    setForm({ ...form, [name]: event.target.value });

  function save() {
    const missing = fillInFirst([
      ["the name on the button", form.displayName],
      ["the issuer URL", form.issuer],
      ["the client ID", form.clientId],
      ["the email domain", form.emailDomain],
      // Stored, the secret is kept when left empty; a first setup needs it.
      ...(settings ? [] : ([["the client secret", form.clientSecret]] as [string, string][])),
    ]);
    if (missing) return setMessage({ ok: false, text: missing });
    const roleMap = parseMapping(form.roleMap);
    if (!roleMap) {
      setMessage({ ok: false, text: 'Write each mapping on its own line as "group = SUPERVISOR" or "group = ADMIN".' });
      return;
    }
    startTransition(async () => {
      const input = { ...form, roleMap };
      const response = await stepUp.run(
        { kind: "admin.sso", issuer: form.issuer.trim(), emailDomain: form.emailDomain.trim().toLowerCase() },
        (proofId) => saveSsoSettingsAction({ ...input, proofId }),
      );
      setMessage(
        saidOf(
          response,
          ({ held, passwordSessionsEnded }) =>
            held ??
            (passwordSessionsEnded > 0
              ? `Saved. ${count(passwordSessionsEnded, "password session")} ended; they sign in again through ${form.displayName}.`
              : "Saved."),
        ),
      );
      if (response.ok) setForm({ ...form, clientSecret: "" });
    });
  }

  function remove() {
    startTransition(async () => {
      const response = await stepUp.run({ kind: "admin.sso-removed", issuer: settings?.issuer ?? "" }, (proofId) =>
        removeSsoSettingsAction({ proofId }),
      );
      setMessage(saidOf(response, () => "Removed: everyone signs in with a password again."));
    });
  }

  const field = (name: "displayName" | "issuer" | "clientId" | "emailDomain" | "groupsClaim", label: string) => (
    <p>
      <label>
        {label}
        <br />
        <input name={`sso-${name}`} value={form[name]} onChange={set(name)} style={{ width: "100%" }} />
      </label>
    </p>
  );

  return (
    <div className="card">
      <p className="muted">
        {settings
          ? `People of ${settings.emailDomain} can sign in through ${settings.displayName}. The client secret is stored encrypted and not shown; leave it empty to keep it.`
          : "No identity provider is set; everyone signs in with a password."}{" "}
        A person is bound to the provider at their first sign-in by an email the provider has verified. A new provider,
        client, domain or role mapping waits for another admin.
      </p>
      {field("displayName", "Name on the sign-in button")}
      {field("issuer", "Issuer URL (https://)")}
      {field("clientId", "Client ID")}
      <Field
        label="Client secret"
        name="sso-clientSecret"
        type="password"
        autoComplete="off"
        value={form.clientSecret}
        onChange={set("clientSecret")}
        style={{ width: "100%" }}
      />
      {field("emailDomain", "Email domain of your people (example.com)")}
      {field("groupsClaim", "Groups claim (optional, e.g. groups)")}
      <p>
        <label>
          Roles from groups, one &quot;group = SUPERVISOR&quot; or &quot;group = ADMIN&quot; a line (empty: roles as set
          here)
          <br />
          <textarea
            name="sso-roleMap"
            rows={3}
            value={form.roleMap}
            onChange={set("roleMap")}
            style={{ width: "100%" }}
          />
        </label>
      </p>
      <p>
        <label>
          <input
            type="checkbox"
            name="sso-required"
            checked={form.required}
            onChange={(event) => setForm({ ...form, required: event.target.checked })}
          />{" "}
          Require single sign-on: passwords off for everyone but admins (each admin password sign-in is recorded), and
          every password session ends
        </label>
      </p>
      {form.required && !settings?.required && (
        <p className="muted" role="note">
          When this takes effect, everyone signed in with a password is signed out, you too if you signed in with one:
          people sign in again through the provider, admins may also use their password. Sessions signed in through the
          provider stay.
        </p>
      )}
      {stepUp.field}
      <BusyButton type="button" className="primary" busy={pending} onClick={save}>
        Save single sign-on
      </BusyButton>{" "}
      {settings && (
        <BusyButton type="button" className="danger" busy={pending} onClick={remove}>
          Remove single sign-on
        </BusyButton>
      )}{" "}
      <SaidMessage said={message} />
      {settings && <SsoInvite hasPasskey={hasPasskey} />}
    </div>
  );
}

/**
 * Binds a person to their account at the provider by its ID (`sub`) before they first sign in, for a provider that
 * does not verify emails; it waits for another admin.
 */
function SsoInvite({ hasPasskey }: { hasPasskey: boolean }) {
  const stepUp = useStepUp(hasPasskey);
  const [email, setEmail] = useState("");
  const [subject, setSubject] = useState("");
  const [message, setMessage] = useState<Said>(null);
  const [pending, startTransition] = useTransition();

  function invite() {
    const missing = fillInFirst([
      ["their email", email],
      ["their ID at the provider", subject],
    ]);
    if (missing) return setMessage({ ok: false, text: missing });
    startTransition(async () => {
      const input = { email: email.trim().toLowerCase(), subject: subject.trim() };
      const response = await stepUp.run({ kind: "admin.sso-invite", ...input }, (proofId) =>
        inviteToSsoAction({ ...input, proofId }),
      );
      setMessage(saidOf(response, (data) => data.held ?? "Invited."));
    });
  }

  return (
    <fieldset>
      <legend>Invite a person by their ID at the provider</legend>
      <Field
        label="Their email here"
        name="sso-invite-email"
        type="email"
        value={email}
        onChange={(event) => setEmail(event.target.value)}
        style={{ width: "100%" }}
      />
      <Field
        label="Their ID at the provider (the sub claim)"
        name="sso-invite-subject"
        value={subject}
        onChange={(event) => setSubject(event.target.value)}
        style={{ width: "100%" }}
      />
      {stepUp.field}
      <BusyButton type="button" busy={pending} onClick={invite}>
        Invite
      </BusyButton>{" "}
      <SaidMessage said={message} />
    </fieldset>
  );
}
