import path from "node:path";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

// The project's own ESLint config over small fixture files placed in lib/: the floors rule must refuse an import
// that runs up, sideways or out of lib/, and a root file that imports a feature; it must let a downward one pass.
const root = path.resolve(import.meta.dirname, "..");
// import/no-cycle reads the files from disk, and a fixture given as text is not there.
const eslint = new ESLint({ cwd: root, overrideConfig: { rules: { "import/no-cycle": "off" } } });

async function layerErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result.messages.filter((message) => message.ruleId === "layers/imports-point-down").map((m) => m.message);
}

describe("every import in lib/ points down", { timeout: 60_000 }, () => {
  it("refuses the tools importing the gateway above them, and lets the gateway import the tools", async () => {
    expect(
      await layerErrors(
        "lib/tools/fixture.ts",
        'import { proposeToolCall } from "../gateway/pipeline";\nvoid proposeToolCall;\n',
      ),
    ).toEqual([expect.stringContaining("lib/tools/ (floor 2) may not import lib/gateway/ (floor 4)")]);
    expect(
      await layerErrors("lib/gateway/fixture.ts", 'import { findTool } from "../tools/registry";\nvoid findTool;\n'),
    ).toEqual([]);
  });

  it("refuses a sideways import between folders on one floor, with either spelling of the path", async () => {
    expect(
      await layerErrors("lib/audit/fixture.ts", 'import type { SessionUser } from "@/lib/auth/sign-in/auth";\n'),
    ).toEqual([expect.stringContaining("lib/audit/ (floor 1) may not import lib/auth/ (floor 2)")]);
    expect(await layerErrors("lib/auth/fixture.ts", 'export { findTool } from "../tools/registry";\n')).toEqual([
      expect.stringContaining("lib/auth/ (floor 2) may not import lib/tools/ (floor 2)"),
    ]);
  });

  it("refuses a root file importing a feature, a file as well as a folder", async () => {
    expect(
      await layerErrors("lib/fixture.ts", 'import { jobsProblem } from "./instance/jobs";\nvoid jobsProblem;\n'),
    ).toEqual([expect.stringContaining("lib's ground")]);
    expect(await layerErrors("lib/fixture.ts", 'import { db } from "./db";\nvoid db;\n')).toEqual([]);
  });

  it("refuses a folder without a floor and an import out of lib/", async () => {
    expect(
      await layerErrors("lib/newfeature/fixture.ts", 'import { findTool } from "../tools/registry";\nvoid findTool;\n'),
    ).toEqual([expect.stringContaining("lib/newfeature/ has no floor")]);
    expect(await layerErrors("lib/gateway/fixture.ts", 'const page = import("@/app/page");\nvoid page;\n')).toEqual([
      expect.stringContaining("lib/ is what production runs"),
    ]);
  });
});

describe("the gateway has one door, and the pages reach no statement", { timeout: 60_000 }, () => {
  it("refuses a deep import into the gateway from a feature, a page or a script, and lets its index.ts pass", async () => {
    const deep = 'import { checkPolicy } from "@/lib/gateway/decide/policy";\nvoid checkPolicy;\n';
    const door = "lib/gateway/ is entered through its index.ts only";
    expect(await layerErrors("lib/payments/fixture.ts", deep)).toEqual([expect.stringContaining(door)]);
    expect(await layerErrors("app/api/fixture/route.ts", deep)).toEqual([expect.stringContaining(door)]);
    expect(await layerErrors("scripts/fixture.ts", deep)).toEqual([expect.stringContaining(door)]);
    const front = 'import { recheckForResend } from "@/lib/gateway";\nvoid recheckForResend;\n';
    expect(await layerErrors("lib/payments/fixture.ts", front)).toEqual([]);
    expect(await layerErrors("lib/gateway/outcome/fixture.ts", deep)).toEqual([]);
  });

  it("refuses a sql.ts or lib/db import from app/ and components/, types included", async () => {
    expect(
      await layerErrors(
        "app/api/fixture/route.ts",
        'import { findPeople } from "@/lib/admin/access/sql";\nvoid findPeople;\n',
      ),
    ).toEqual([expect.stringContaining("app/ runs no statement")]);
    expect(await layerErrors("app/fixture/page.tsx", 'import { db } from "@/lib/db";\nvoid db;\n')).toEqual([
      expect.stringContaining("app/ runs no statement"),
    ]);
    expect(
      await layerErrors(
        "app/fixture/page.tsx",
        'import { insertOutbox } from "@/lib/db/outbox";\nvoid insertOutbox;\n',
      ),
    ).toEqual([expect.stringContaining("app/ runs no statement")]);
    expect(
      await layerErrors("components/admin/fixture.tsx", 'import type { AuditEntry } from "@/lib/admin/sql";\n'),
    ).toEqual([expect.stringContaining("components/ runs no statement")]);
    expect(
      await layerErrors("components/admin/fixture.tsx", 'import type { AuditEntry } from "@/lib/admin/audit";\n'),
    ).toEqual([]);
  });
});
