import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { expectUsable, shoot } from "../fixtures";
import { openConversation, propose, SEEDED, signedInPage } from "../support";

// server-filesystem from npm behind toolgate (scripts/e2e-server.ts starts it over stdio in .toolgate/e2e-files):
// an admin reviews its tools on /admin/upstream, a held write_file is approved from its card and the file is
// written exactly as shown; edit_file's card shows the change as a diff.

const FOLDER = path.resolve(".toolgate", "e2e-files");

test("an admin reviews the server's tools; a held write is approved from its card and written once", async ({
  browser,
  baseURL,
  request,
}) => {
  const target = path.join(FOLDER, "from-the-card.txt");
  rmSync(target, { force: true });

  const { context: adminContext, page: admin } = await signedInPage(browser, SEEDED.admin, baseURL!);
  await expect(async () => {
    await admin.goto("/admin/upstream");
    await expect(admin.locator('[data-tool="files__write_file"]')).toBeVisible({ timeout: 1000 });
  }).toPass({ timeout: 30_000 });
  for (const tool of ["files__read_text_file", "files__write_file", "files__edit_file"]) {
    const card = admin.locator(`[data-tool="${tool}"]`);
    await expect(card.getByTestId("upstream-description")).not.toBeEmpty();
    await card.getByRole("button", { name: /Review this definition|Save the verdict/ }).click();
    await expect(admin.getByRole("status")).toContainText(`${tool}: reviewed`);
  }
  await expect(admin.locator('[data-tool="files__write_file"]')).toContainText("hold: each call waits");
  await expectUsable(admin, "MCP servers");
  await shoot(admin, "admin-upstream");

  const conversation = await openConversation(request, SEEDED.agent.email, {
    customer_id: "cu_ana",
    tools: ["files__read_text_file", "files__write_file", "files__edit_file"],
  });
  const held = await propose(
    request,
    SEEDED.agent.email,
    conversation,
    { name: "files__write_file", arguments: { path: target, content: "line one\nline two\nline three\n" } },
    "e2e-upstream-write",
  );
  expect(held.code).toBe("approval.required");
  expect(existsSync(target)).toBe(false);

  const { context: supervisorContext, page: desk } = await signedInPage(browser, SEEDED.supervisor, baseURL!);
  await desk.goto("/approvals");
  const card = desk.locator(`[data-testid="approval-item"][data-approval-id="${held.approval!.id}"]`);
  await expect(card.getByTestId("card-title")).toContainText("on files");
  await expect(card.getByTestId("upstream-argument-content").locator("li")).toHaveText([
    "line one",
    "line two",
    "line three",
    "",
  ]);
  await expect(card.getByTestId("upstream-server")).toContainText("files · definition");
  await expect(card.getByTestId("upstream-claims")).toContainText("may change things");
  await expect(card.getByTestId("upstream-claims")).toContainText("the server's own claim");
  await shoot(desk, "approval-upstream-write");
  await card.getByRole("button", { name: "Approve" }).click();
  await expect(card).toHaveCount(0);
  await expect
    .poll(() => (existsSync(target) ? readFileSync(target, "utf8") : null))
    .toBe("line one\nline two\nline three\n");

  const edit = await propose(
    request,
    SEEDED.agent.email,
    conversation,
    { name: "files__edit_file", arguments: { path: target, edits: [{ oldText: "line two", newText: "line 2" }] } },
    "e2e-upstream-edit",
  );
  expect(edit.code).toBe("approval.required");
  await desk.goto("/approvals");
  const editCard = desk.locator(`[data-testid="approval-item"][data-approval-id="${edit.approval!.id}"]`);
  await expect(editCard.getByTestId("upstream-diff")).toContainText("- line two");
  await expect(editCard.getByTestId("upstream-diff")).toContainText("+ line 2");
  await shoot(desk, "approval-upstream-edit");
  expect(readFileSync(target, "utf8")).toBe("line one\nline two\nline three\n");
  await expectUsable(desk, "Pending approvals");

  // At a phone's width both pages fit without sideways scrolling, and stay clean under axe.
  for (const [context, page, title] of [
    [supervisorContext, "/approvals", "Pending approvals"],
    [adminContext, "/admin/upstream", "MCP servers"],
  ] as const) {
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(page);
    await expectUsable(phone, title);
  }
});
