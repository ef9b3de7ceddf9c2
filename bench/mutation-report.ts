import { readFileSync } from "node:fs";
import { writeSection } from "./common";

// Turns Stryker's JSON report into the mutation table of docs/BENCHMARKS.md.

interface Mutant {
  status: string;
  mutatorName: string;
  location: { start: { line: number } };
  replacement?: string;
}

const report = JSON.parse(readFileSync("reports/mutation/mutation.json", "utf8")) as {
  files: Record<string, { mutants: Mutant[] }>;
};
const stryker = (
  JSON.parse(readFileSync("node_modules/@stryker-mutator/core/package.json", "utf8")) as { version: string }
).version.split(".")[0];
const DETECTED = new Set(["Killed", "Timeout"]);
const VALID = new Set(["Killed", "Timeout", "Survived", "NoCoverage"]);
const rows: string[] = [];
let detected = 0;
let valid = 0;
const survivors: string[] = [];
/** Killed and valid mutants of each mutated folder (`lib/gateway/`, `lib/policy-rules/`). */
const folders = new Map<string, { detected: number; valid: number }>();
for (const [file, { mutants }] of Object.entries(report.files).sort()) {
  const fileValid = mutants.filter((mutant) => VALID.has(mutant.status));
  const fileDetected = fileValid.filter((mutant) => DETECTED.has(mutant.status));
  detected += fileDetected.length;
  valid += fileValid.length;
  const folder = file.split("/").slice(0, 2).join("/");
  const counts = folders.get(folder) ?? { detected: 0, valid: 0 };
  folders.set(folder, { detected: counts.detected + fileDetected.length, valid: counts.valid + fileValid.length });
  const survived = fileValid.length - fileDetected.length;
  rows.push(
    `| ${file} | ${fileDetected.length} | ${survived} | ${fileValid.length ? ((100 * fileDetected.length) / fileValid.length).toFixed(1) : "n/a"}% |`,
  );
  for (const mutant of fileValid.filter((candidate) => !DETECTED.has(candidate.status))) {
    survivors.push(
      `${file}:${mutant.location.start.line} ${mutant.mutatorName}${mutant.replacement ? ` → \`${mutant.replacement.replace(/\s+/g, " ").slice(0, 60)}\`` : ""} (${mutant.status})`,
    );
  }
}
const percent = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)}%`;
const score = (100 * detected) / valid;
const byFolder = [...folders]
  .map(
    ([folder, counts]) =>
      `\`${folder}/\` ${percent(counts.detected, counts.valid)} (${counts.detected} of ${counts.valid})`,
  )
  .join(", ");
await writeSection(
  "mutation",
  `
\`npm run test:mutation\` (Stryker ${stryker}, Vitest runner, per-test coverage) over ${[...folders.keys()].map((folder) => `\`${folder}/\``).join(" and ")}, with
the tests in \`vitest.mutation.config.ts\`; run on ${new Date().toISOString().slice(0, 10)}.

**Mutation score: ${score.toFixed(1)}%** (${detected} of ${valid} mutants killed or timed out): ${byFolder}.

| file | killed | survived or not covered | score |
|---|---|---|---|
${rows.join("\n")}

Surviving mutants, for the next round of tests:

${survivors.map((line) => `- ${line}`).join("\n") || "- none"}
`,
);
console.log(`mutation score ${score.toFixed(1)}% (${detected}/${valid})`);
