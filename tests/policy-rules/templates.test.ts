import { describe, expect, it } from "vitest";
import { runCases } from "@/lib/policy-rules/cases/cases";
import { RULE_TEMPLATES } from "@/lib/policy-rules/cases/templates";
import { validateRules } from "@/lib/policy-rules/validate";

describe("rule templates", () => {
  it.each(RULE_TEMPLATES.map((template) => [template.title, template] as const))(
    "%s validates against the schema and passes its own cases",
    (_title, template) => {
      const validated = validateRules(template.text);
      expect(validated).toMatchObject({ ok: true, rules: [{ id: template.id }] });
      const results = runCases(validated.ok ? validated.rules : [], template.cases);
      expect(results.filter((result) => !result.passed)).toEqual([]);
      expect(results.length).toBeGreaterThanOrEqual(2);
    },
  );

  it("all of them together pass all their cases", () => {
    const validated = validateRules(RULE_TEMPLATES.map((template) => template.text).join("\n\n"));
    expect(validated.ok).toBe(true);
    const results = runCases(
      validated.ok ? validated.rules : [],
      RULE_TEMPLATES.flatMap((template) => template.cases),
    );
    expect(results.every((result) => result.passed)).toBe(true);
  });
});
