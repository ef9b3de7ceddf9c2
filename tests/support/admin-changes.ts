import { approveChange, type HeldChange } from "@/lib/admin/changes/two-admin";
import { setSelfRegistration } from "@/lib/admin/access/self-registration";
import { setWebhook, type WebhookInput, type WebhookResult } from "@/lib/admin/policy/webhook";
import { connectChatChannel, type ChatChannelResult } from "@/lib/admin/policy/chat-notices";
import type { ChatChannelInput } from "@/lib/chat-notices/channels";
import { db } from "@/lib/db";
import { provedFor } from "./step-up";
import { addPerson, type World } from "./world";

// Loosening changes made the whole way an admin can (docs/decisions/015): the admin's save with a step-up made for
// it, held, then approved by a second admin with their own step-up. For tests whose subject comes after the change.

/** The world's second admin (added once), so a held change waits for them rather than for the delay. */
export async function secondAdmin(world: World): Promise<{ id: string; tenantId: string }> {
  const id = `${world.users.admin}_second`;
  if (!(await db.user.findUnique({ where: { id }, select: { id: true } })))
    await addPerson(world, id, "ADMIN", "Second Admin");
  return { id, tenantId: world.tenantId };
}

/** An admin's approval of a held change, with the step-up made for it: what `approveChange` answers. */
export async function approveAs(admin: { id: string; tenantId: string }, change: { id: string; digest: string }) {
  const proof = await provedFor(admin.id, {
    kind: "admin.change-approved",
    changeId: change.id,
    digest: change.digest,
  });
  return approveChange(admin, change.id, change.digest, proof);
}

async function approveHeld(world: World, held: HeldChange): Promise<void> {
  const second = await secondAdmin(world);
  const { digest } = await db.adminChange.findUniqueOrThrow({ where: { id: held.id }, select: { digest: true } });
  const approved = await approveAs(second, { id: held.id, digest });
  if (!approved.ok) throw new Error(`the second admin could not approve: ${approved.code}`);
}

/** Sets the tenant's approval webhook; a save the outbound guard refuses comes back as refused, nothing held. */
export async function setWebhookApproved(world: World, input: WebhookInput): Promise<WebhookResult> {
  await secondAdmin(world);
  const admin = { id: world.users.admin, tenantId: world.tenantId };
  const saved = await setWebhook(admin, input, await provedFor(admin.id, { kind: "admin.webhook", url: input.url }));
  if (!saved.ok || !saved.held) return saved;
  await approveHeld(world, saved.held);
  return { ok: true, held: null };
}

/** Connects the tenant's Slack or Teams; a save refused (step-up, outbound guard) comes back as refused, nothing held. */
export async function connectChatApproved(world: World, input: ChatChannelInput): Promise<ChatChannelResult> {
  await secondAdmin(world);
  const admin = { id: world.users.admin, tenantId: world.tenantId };
  const target = input.provider === "slack" ? input.channel : input.url;
  const proof = await provedFor(admin.id, { kind: "admin.chat", provider: input.provider, target });
  const saved = await connectChatChannel(admin, input, proof);
  if (!saved.ok || !saved.held) return saved;
  await approveHeld(world, saved.held);
  return { ok: true, held: null };
}

/** Allows self-registered OAuth clients (RFC 7591) in the tenant. */
export async function allowSelfRegistration(world: World): Promise<void> {
  await secondAdmin(world);
  const admin = { id: world.users.admin, tenantId: world.tenantId };
  const held = await setSelfRegistration(admin, true, await provedFor(admin.id, { kind: "admin.self-registration" }));
  if (typeof held !== "object") throw new Error(`allowing self-registration was not held: ${held}`);
  await approveHeld(world, held);
}
