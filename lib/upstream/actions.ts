"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authedAction } from "../auth/guards";
import { db } from "../db";
import { IdSchema } from "../security/input";
import { resolveUnknownCall } from "./calls/resolve";
import { addRemoteServer, RemoteServerSchema, reviewTool, ReviewSchema } from "./servers/servers";
import { findServer } from "./sql";
import { ListingRefused, syncServer } from "./servers/sync";

const person = (user: { id: string; tenantId: string; role: string }) => ({
  userId: user.id,
  tenantId: user.tenantId,
  role: user.role,
});

/** A supervisor says whether a call whose answer was lost happened upstream, after checking there. */
export const resolveUpstreamCallAction = authedAction(
  z.strictObject({ call_id: IdSchema, done: z.boolean() }),
  ["SUPERVISOR"],
  async (input, user) => {
    const resolved = await resolveUnknownCall(person(user), input.call_id, input.done);
    if (!resolved.ok) return resolved;
    revalidatePath("/approvals");
    return { ok: true, data: null };
  },
);

export const addUpstreamServerAction = authedAction(RemoteServerSchema, ["ADMIN"], async (input, user) => {
  const added = await addRemoteServer(person(user), input);
  if (!added.ok) return added;
  revalidatePath("/admin/upstream");
  return { ok: true, data: added.data };
});

export const reviewUpstreamToolAction = authedAction(ReviewSchema, ["ADMIN"], async (input, user) => {
  const reviewed = await reviewTool(person(user), input);
  if (!reviewed.ok) return reviewed;
  revalidatePath("/admin/upstream");
  return { ok: true, data: null };
});

/** Lists the server's tools again now: new ones wait for review, changed ones are quarantined. */
export const syncUpstreamServerAction = authedAction(
  z.strictObject({ name: z.string().min(1).max(30) }),
  ["ADMIN"],
  async (input, user) => {
    const server = await findServer(db, user.tenantId, input.name);
    if (!server) return { ok: false, code: "server.not-found", message: "no such server" };
    const report = await syncServer(server).catch((error: Error) => error);
    if (report instanceof ListingRefused)
      return { ok: false, code: report.code, message: `${input.name}'s tools were not taken: ${report.message}` };
    if (report instanceof Error)
      return { ok: false, code: "server.unreachable", message: `${input.name} could not be listed: ${report.message}` };
    revalidatePath("/admin/upstream");
    return { ok: true, data: report };
  },
);
