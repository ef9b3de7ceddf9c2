import { applyHeldSso, ssoAuditDetail, type SsoDomainRefusal, type SsoProposal } from "../../auth/sso/settings";
import { bindInvited, type SsoInvitation } from "../../auth/sso/binding";
import type { SsoSettingsRow } from "../../auth/sso/sql";
import { consumeStepUpFor, type StepUpHolder, type StepUpMethod } from "../../auth/step-up/step-up";
import { canonicalJson, sha256Hex, storedDigest } from "../../canonical";
import { channelWords } from "../../chat-notices/channels";
import { lockChatChannel, setChatChannel, type ChatProvider } from "../../chat-notices/sql";
import { db, transaction, type Tx } from "../../db";
import { newId } from "../../ids";
import { logError } from "../../observe/log";
import { queueMessages } from "../../db/outbox";
import { utcWords } from "../../words";
import type { PolicyNumbers } from "./loosening/loosening";
import { POLICY_FIELDS, readableValue } from "../policy/fields";
import type { RuleCase } from "../../policy-rules/cases/cases";
import { reviewRulesChange } from "../rules/publishing/review";
import { putInForce } from "../rules/publishing/versions";
import {
  closeAdminChange,
  expireAdminChanges,
  findOverseers,
  findPendingChanges,
  insertAdminChange,
  lockAdminChange,
  lockDueDelayedChanges,
  type AdminChangeRow,
} from "./sql";
import { findTenantAgent, releaseKey, revokeHeldKey, setCanRefund, setTenantSelfRegistration } from "../access/sql";
import { insertAudit } from "../sql";
import { lockPolicy, lockTenantWebhook, setTenantWebhook, updatePolicyValues } from "../policy/sql";
import { lockRuleSets, lockTimeZone, setTimeZone } from "../rules/sql";

// A change the two-admin rule holds (docs/decisions/015): stored as the exact change and the state it was proposed
// against, bound by a digest; a different admin approves it once before it expires, or, in a tenant with one admin,
// it applies when its delay has passed unless a supervisor or admin cancelled it. It applies only if the state
// still matches what was proposed.

interface Person {
  id: string;
  tenantId: string;
}

export type ChangeProposal =
  | { kind: "policy"; change: PolicyNumbers; base: PolicyNumbers }
  | { kind: "refunds"; change: { userId: string; email: string; canRefund: true }; base: { canRefund: false } }
  | {
      kind: "api-key";
      change: { userId: string; email: string; keyId: string; prefix: string };
      base: Record<string, never>;
    }
  | {
      kind: "rules";
      change: { text: string; cases: RuleCase[]; loosened: string[]; rules: number; restoresVersion: number | null };
      base: { liveRuleSetId: string | null };
    }
  | {
      kind: "webhook";
      /** URL and secret encrypted for the tenant's columns, as they will be stored; only the host is ever shown. */
      change: { host: string; url: string; secret: string };
      base: { host: string | null; stored: string | null };
    }
  | {
      kind: "chat";
      /** The secret (Slack's bot token, the Teams URL) encrypted as it will be stored; only `shown` is ever shown. */
      change: { provider: ChatProvider; shown: string; channel: string | null; secret: string };
      base: { shown: string | null; stored: string | null };
    }
  | { kind: "self-registration"; change: { enabled: true }; base: { enabled: false } }
  | ({ kind: "sso" } & SsoProposal)
  | { kind: "sso-invite"; change: SsoInvitation; base: Record<string, never> }
  | { kind: "time-zone"; change: { timeZone: string }; base: { timeZone: string } };

export interface HeldChange {
  id: string;
  mode: "second-admin" | "delay";
  applyAt: Date | null;
  expiresAt: Date;
}

/** What a change does, line by line, as a person reads it: "Auto limit: 50.00 USD → 100000.00 USD". */
export function changeLines(kind: string, change: Record<string, unknown>, base: Record<string, unknown>): string[] {
  if (kind === "policy")
    return POLICY_FIELDS.filter((spec) => base[spec.name] !== change[spec.name]).map(
      (spec) =>
        `${spec.label}: ${readableValue(spec, Number(base[spec.name]))} → ${readableValue(spec, Number(change[spec.name]))}`,
    );
  if (kind === "refunds") return [`${String(change.email)}: refunds not allowed → allowed`];
  if (kind === "webhook")
    return [
      `Approval webhook: ${String(base.host ?? "none")} → ${String(change.host)} (each new request is posted there)`,
    ];
  if (kind === "chat") {
    const provider = change.provider as ChatProvider;
    const before = channelWords(provider, base.shown as string | null);
    return [
      `Held calls in chat: ${before} → ${channelWords(provider, String(change.shown))} (each held call's agent, customer, amount and reasons are posted there)`,
    ];
  }
  if (kind === "self-registration") return ["Clients that register themselves (names not verified): refused → allowed"];
  if (kind === "sso-invite")
    return [
      `Single sign-on: ${String(change.email)} signs in as whoever is ${String(change.subject)} at ${String(change.issuer)}`,
    ];
  if (kind === "sso") {
    const roles = Object.entries(change.roleMap as Record<string, string>).map(([group, role]) => `${group} → ${role}`);
    return [
      `Single sign-on: people of ${String(change.emailDomain)} sign in through ${String(change.issuer)}${roles.length ? ` (roles from groups: ${roles.join(", ")})` : ""}`,
    ];
  }
  if (kind === "time-zone")
    return [`Time zone of the rules' time of day: ${String(base.timeZone)} → ${String(change.timeZone)}`];
  if (kind === "rules") {
    const loosened = (change.loosened as string[]).map((id) => `"${id}"`).join(", ");
    const rollback =
      typeof change.restoresVersion === "number" ? ` (a rollback to version ${change.restoresVersion})` : "";
    return [
      `Live policy rules${rollback}: a new set of ${String(change.rules)} rules that drops or rewrites ${loosened}`,
    ];
  }
  return [`New API key ${String(change.prefix)}… for ${String(change.email)}: works only once this change applies`];
}

/**
 * Holds a loosening change in the caller's transaction: with another active admin it waits for their approval until
 * the tenant's change delay passes; with none it applies after that delay. Every supervisor and every other admin
 * is emailed, and the proposal is audited.
 */
export async function holdChange(
  tx: Tx,
  proposer: Person,
  proposal: ChangeProposal,
  stepUp: StepUpMethod | null,
): Promise<HeldChange> {
  const policy = await lockPolicy(tx, proposer.tenantId);
  const overseers = await findOverseers(tx, proposer.tenantId);
  const otherAdmins = overseers.filter((person) => person.role === "ADMIN" && person.id !== proposer.id);
  const mode = otherAdmins.length > 0 ? "second-admin" : "delay";
  const createdAt = new Date();
  const ends = new Date(createdAt.getTime() + policy.changeDelaySeconds * 1000);
  const id = newId("chg");
  const digest = sha256Hex(
    canonicalJson({
      id,
      tenantId: proposer.tenantId,
      kind: proposal.kind,
      change: proposal.change,
      base: proposal.base,
    }),
  );
  const row = {
    id,
    tenantId: proposer.tenantId,
    kind: proposal.kind,
    change: proposal.change,
    base: proposal.base,
    digest,
    proposedById: proposer.id,
    mode,
    applyAt: mode === "delay" ? ends : null,
    expiresAt: ends,
    createdAt,
  } as const;
  await insertAdminChange(tx, row);
  await insertAudit(tx, proposer, "change.proposed", {
    changeId: id,
    kind: proposal.kind,
    // A webhook's URL and secret, and a chat channel's token or URL, stay write-only: the audit names where they go.
    change:
      proposal.kind === "webhook"
        ? { host: proposal.change.host }
        : proposal.kind === "chat"
          ? { provider: proposal.change.provider, shown: proposal.change.shown }
          : proposal.kind === "sso"
            ? ssoAuditDetail(proposal.change)
            : proposal.change,
    base: proposal.base,
    mode,
    until: ends.toISOString(),
    stepUp,
  });
  const lines = changeLines(proposal.kind, proposal.change, proposal.base as Record<string, unknown>);
  const when =
    mode === "delay"
      ? `It applies on ${utcWords(ends)} unless a supervisor or admin cancels it before then.`
      : `It applies only if another admin approves it before ${utcWords(ends)}.`;
  const body = [
    `An admin proposed a change that loosens control over money:`,
    ``,
    ...lines,
    ``,
    when,
    `Change: ${id}`,
    ``,
    `Review it in toolgate: admins under Admin, supervisors under Approvals. Cancel it if you did not expect it.`,
  ].join("\n");
  await queueMessages(
    tx,
    { tenantId: proposer.tenantId, orderId: null, toolCallId: null },
    overseers
      .filter((person) => person.id !== proposer.id)
      .map((person) => ({
        kind: "admin_change_email",
        recipient: person.email,
        subject: `Change waiting: ${lines[0] ?? proposal.kind}`,
        body,
      })),
  );
  return { id, mode, applyAt: row.applyAt, expiresAt: ends };
}

/** Why a held change did not apply: the state changed since it was proposed, or another tenant took its domain. */
type NotApplied = "stale" | SsoDomainRefusal;

/** What the approver reads when a change can no longer apply. */
const NOT_APPLIED_WORDS: Record<NotApplied, string> = {
  stale: "Something changed since this was proposed, so it no longer applies; propose it again if needed.",
  "sso.domain-taken":
    "Another tenant signs in people of this email domain since this was proposed, so it can never apply; propose your own domain.",
  "sso.domain-in-use":
    "People of another tenant have email addresses at this domain since this was proposed, so it can never apply; propose a domain only your own people have.",
};

/** Closes a change that can no longer apply, as superseded, audited with why when it is not plain staleness. */
async function supersede(tx: Tx, row: AdminChangeRow, actor: Person, by: Person | null, why: NotApplied) {
  await endChange(tx, row, "superseded", by);
  await insertAudit(tx, actor, "change.superseded", {
    changeId: row.id,
    kind: row.kind,
    ...(why === "stale" ? {} : { reason: why }),
  });
}

/**
 * Applies a held change if the state still matches its base; why not when something changed since. `approver` is
 * the second admin who approved it, null when it applies because its delay passed: no one approved it then, so the
 * records name no approver rather than the proposer.
 */
async function applyChange(tx: Tx, row: AdminChangeRow, approver: Person | null): Promise<"applied" | NotApplied> {
  const approvedById = approver?.id ?? null;
  if (row.kind === "policy") {
    const current = await lockPolicy(tx, row.tenantId);
    if (canonicalJson(current) !== canonicalJson(row.base)) return "stale";
    const after = await updatePolicyValues(tx, row.tenantId, row.change as PolicyNumbers);
    await insertAudit(tx, { id: row.proposedById, tenantId: row.tenantId }, "policy.updated", {
      before: current,
      after,
      changeId: row.id,
      approvedById,
    });
    return "applied";
  }
  if (row.kind === "rules") {
    const current = await lockRuleSets(tx, row.tenantId);
    if (current.liveRuleSetId !== (row.base.liveRuleSetId ?? null)) return "stale";
    const author = { id: row.proposedById, tenantId: row.tenantId };
    const restores = row.change.restoresVersion;
    await putInForce(
      tx,
      author,
      {
        text: String(row.change.text),
        // A change held before cases were kept has none.
        cases: (row.change.cases as RuleCase[] | undefined) ?? [],
        status: "live",
        restoresVersion: typeof restores === "number" ? restores : null,
      },
      { changeId: row.id, approvedById },
    );
    return "applied";
  }
  if (row.kind === "time-zone") {
    const current = await lockTimeZone(tx, row.tenantId);
    if (current.timeZone !== row.base.timeZone) return "stale";
    await setTimeZone(tx, row.tenantId, String(row.change.timeZone));
    await insertAudit(tx, { id: row.proposedById, tenantId: row.tenantId }, "rules.time-zone-set", {
      before: current.timeZone,
      after: row.change.timeZone,
      changeId: row.id,
      approvedById,
    });
    return "applied";
  }
  if (row.kind === "webhook") {
    if (storedDigest(await lockTenantWebhook(tx, row.tenantId)) !== row.base.stored) return "stale";
    await setTenantWebhook(tx, row.tenantId, {
      webhookUrl: String(row.change.url),
      webhookSecret: String(row.change.secret),
    });
    await insertAudit(tx, { id: row.proposedById, tenantId: row.tenantId }, "webhook.set", {
      host: row.change.host,
      changeId: row.id,
      approvedById,
    });
    return "applied";
  }
  if (row.kind === "chat") {
    const provider = row.change.provider as ChatProvider;
    const current = await lockChatChannel(tx, row.tenantId, provider);
    if (storedDigest(current?.secret ?? null) !== row.base.stored) return "stale";
    await setChatChannel(tx, row.tenantId, provider, {
      channel: (row.change.channel as string | null) ?? null,
      secret: String(row.change.secret),
    });
    await insertAudit(tx, { id: row.proposedById, tenantId: row.tenantId }, "chat.connected", {
      provider,
      shown: row.change.shown,
      changeId: row.id,
      approvedById,
    });
    return "applied";
  }
  if (row.kind === "sso-invite") {
    const by = { proposedById: row.proposedById, changeId: row.id, approvedById };
    return bindInvited(tx, row.tenantId, row.change as SsoInvitation, by);
  }
  if (row.kind === "sso") {
    const proposal = { change: row.change as unknown as SsoSettingsRow, base: row.base as SsoProposal["base"] };
    return applyHeldSso(tx, proposal, { proposedById: row.proposedById, changeId: row.id, approvedById });
  }
  if (row.kind === "self-registration") {
    if ((await setTenantSelfRegistration(tx, row.tenantId, true)) === 0) return "stale";
    await insertAudit(tx, { id: row.proposedById, tenantId: row.tenantId }, "oauth.registration-allowed", {
      changeId: row.id,
      approvedById,
    });
    return "applied";
  }
  const userId = String(row.change.userId);
  const agent = await findTenantAgent(tx, row.tenantId, userId);
  if (!agent) return "stale";
  if (row.kind === "refunds") {
    if (agent.canRefund || (await setCanRefund(tx, row.tenantId, userId, true)) === 0) return "stale";
    await insertAudit(tx, { id: row.proposedById, tenantId: row.tenantId }, "agent.refunds-granted", {
      userId,
      email: agent.email,
      before: false,
      after: true,
      changeId: row.id,
      approvedById,
    });
    return "applied";
  }
  if ((await releaseKey(tx, row.tenantId, row.id)) === 0) return "stale";
  await insertAudit(tx, { id: row.proposedById, tenantId: row.tenantId }, "api-key.created", {
    keyId: row.change.keyId,
    userId,
    changeId: row.id,
    approvedById,
  });
  return "applied";
}

/** Closes a change that will never apply, revoking any key it minted. */
async function endChange(
  tx: Tx,
  row: Pick<AdminChangeRow, "id" | "tenantId">,
  status: "cancelled" | "expired" | "superseded",
  by: Person | null,
): Promise<void> {
  await closeAdminChange(tx, row.id, status, by?.id ?? null);
  await revokeHeldKey(tx, row.id);
}

export type ApproveResult =
  | { ok: true }
  | {
      ok: false;
      code:
        | "not-found"
        | "change.decided"
        | "change.expired"
        | "change.own"
        | "change.digest-mismatch"
        | "change.stale"
        | "step-up.required";
      message: string;
    };

/**
 * A second admin approves exactly the change they were shown (its digest), once, before it expires, never their
 * own, with a step-up proof made for this change in this session; it applies only if the state still matches what
 * was proposed.
 */
export async function approveChange(
  admin: Person,
  changeId: string,
  digest: string,
  holder: StepUpHolder,
): Promise<ApproveResult> {
  return transaction(async (tx) => {
    const row = await lockAdminChange(tx, admin.tenantId, changeId);
    if (!row) return { ok: false, code: "not-found", message: "No such change in your tenant." };
    if (row.status !== "pending")
      return { ok: false, code: "change.decided", message: `This change was already ${row.status}.` };
    if (row.expiresAt.getTime() <= Date.now()) {
      await endChange(tx, row, "expired", null);
      return { ok: false, code: "change.expired", message: "This change expired; ask for it to be proposed again." };
    }
    if (row.proposedById === admin.id)
      return {
        ok: false,
        code: "change.own",
        message: "You proposed this change; a different admin must approve it.",
      };
    if (row.digest !== digest)
      return {
        ok: false,
        code: "change.digest-mismatch",
        message: "This is not the change you were shown; reload the page and review it again.",
      };
    const stepUp = await consumeStepUpFor(tx, holder, { kind: "admin.change-approved", changeId, digest });
    if (!stepUp)
      return {
        ok: false,
        code: "step-up.required",
        message: "Approving a change needs you to confirm it is you first. Nothing was changed.",
      };
    const outcome = await applyChange(tx, row, admin);
    if (outcome !== "applied") {
      await supersede(tx, row, admin, admin, outcome);
      return { ok: false, code: "change.stale", message: NOT_APPLIED_WORDS[outcome] };
    }
    await closeAdminChange(tx, row.id, "applied", admin.id);
    await insertAudit(tx, admin, "change.approved", { changeId: row.id, kind: row.kind, stepUp });
    return { ok: true };
  });
}

/** Any supervisor or admin of the tenant cancels a waiting change; it never applies. */
export async function cancelChange(person: Person, changeId: string): Promise<boolean> {
  return transaction(async (tx) => {
    const row = await lockAdminChange(tx, person.tenantId, changeId);
    if (!row || row.status !== "pending") return false;
    await endChange(tx, row, "cancelled", person);
    await insertAudit(tx, person, "change.cancelled", { changeId: row.id, kind: row.kind });
    return true;
  });
}

/**
 * Background job: applies delayed changes whose delay passed (one transaction each, safe on several instances) and
 * expires changes no second admin approved in time. A change whose transaction fails is logged and left for the next
 * run, skipped in this one: it never stops the other tenants' changes or the expiry. Returns how many it applied.
 */
export async function applyDueChanges(): Promise<number> {
  let applied = 0;
  const failed: string[] = [];
  for (;;) {
    const tried: { row?: AdminChangeRow } = {};
    const done = await transaction(async (tx) => {
      const [row] = await lockDueDelayedChanges(tx, 1, failed);
      if (!row) return false;
      tried.row = row;
      const proposer = { id: row.proposedById, tenantId: row.tenantId };
      const outcome = await applyChange(tx, row, null);
      if (outcome !== "applied") {
        await supersede(tx, row, proposer, null, outcome);
        return true;
      }
      await closeAdminChange(tx, row.id, "applied", null);
      await insertAudit(tx, proposer, "change.applied-after-delay", { changeId: row.id, kind: row.kind });
      applied++;
      return true;
    }).catch((error: unknown) => {
      if (!tried.row) throw error;
      logError("admin-changes.apply", error, { changeId: tried.row.id, tenantId: tried.row.tenantId });
      failed.push(tried.row.id);
      return true;
    });
    if (!done) break;
  }
  await transaction(async (tx) => {
    for (const row of await expireAdminChanges(tx)) {
      await revokeHeldKey(tx, row.id);
      await insertAudit(tx, { id: row.proposedById, tenantId: row.tenantId }, "change.expired", {
        changeId: row.id,
        kind: row.kind,
      });
    }
  });
  return applied;
}

/**
 * The tenant's waiting changes for the admin page and the supervisors' queue, each described line by line; a rules
 * change also with its full diff and the replay's verdict changes, the replay made once and kept
 * (lib/admin/rules/publishing/review.ts).
 */
export async function pendingChanges(tenantId: string) {
  const rows = await findPendingChanges(db, tenantId);
  const reviews = await Promise.all(
    rows.map((row) => (row.kind === "rules" ? reviewRulesChange(tenantId, row.id, row.change, row.base) : null)),
  );
  return rows.map((row, index) => ({
    id: row.id,
    digest: row.digest,
    kind: row.kind,
    mode: row.mode,
    proposedById: row.proposedById,
    proposer: row.proposer,
    createdAt: row.createdAt.toISOString(),
    applyAt: row.applyAt?.toISOString() ?? null,
    expiresAt: row.expiresAt.toISOString(),
    lines: changeLines(row.kind, row.change, row.base),
    rules: reviews[index],
  }));
}
export type PendingChange = Awaited<ReturnType<typeof pendingChanges>>[number];
