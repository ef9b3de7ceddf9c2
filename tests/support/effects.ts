import { expect } from "vitest";
import { db } from "@/lib/db";
import { effectSnapshot, type World } from "./world";

/** Runs `act` and asserts that no effect store of either tenant changed: orders, refunds, addresses, outbox, budgets. */
export async function expectNoEffect<T>(world: World, act: () => Promise<T>): Promise<T> {
  const before = await effectSnapshot(world);
  const result = await act();
  expect(await effectSnapshot(world)).toEqual(before);
  return result;
}

/** What an order has had refunded, as its row says. */
export const refundedOf = async (order: string) =>
  (await db.order.findUniqueOrThrow({ where: { id: order } })).refundedCents;
