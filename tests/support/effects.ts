import { expect } from "vitest";
import { effectSnapshot, type World } from "./world";

/** Runs `act` and asserts that no effect store of either tenant changed: orders, refunds, addresses, outbox, budgets. */
export async function expectNoEffect<T>(world: World, act: () => Promise<T>): Promise<T> {
  const before = await effectSnapshot(world);
  const result = await act();
  expect(await effectSnapshot(world)).toEqual(before);
  return result;
}
