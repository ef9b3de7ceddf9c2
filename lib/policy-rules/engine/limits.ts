/**
 * Bounds checked on the rule text before the Cedar parser sees it: the wasm parser and evaluator recurse, and deep
 * nesting (200 brackets, 400 nested `if`) or a long chain of operators (about 8,300 chained `+`, `.` or `[…]` when
 * the whole set is parsed) overflows their stack and can leave the engine broken for every later call. Cedar has no
 * loops or recursion, so a rule within these bounds always finishes.
 */
export const RULE_LIMITS = {
  textChars: 40_000,
  ruleChars: 2_000,
  rules: 100,
  depth: 20,
  operatorsPerRule: 100,
  ifsPerRule: 20,
} as const;

/** The text without string literals and comments (their line breaks kept), so their content never counts as structure. */
function structureOf(text: string): string {
  return text.replace(/"(?:[^"\\]|\\.)*"?|\/\/[^\n]*/g, (literal) =>
    literal.startsWith('"') ? `""${literal.replace(/[^\n]/g, "")}` : "",
  );
}

const lineAt = (structure: string, index: number) => structure.slice(0, index).split("\n").length;

/** The first bound the whole text passes, in words, or null. */
export function textOverLimit(text: string): string | null {
  if (text.length > RULE_LIMITS.textChars) {
    return `the rule set is ${text.length} characters long; at most ${RULE_LIMITS.textChars} are allowed`;
  }
  const structure = structureOf(text);
  let depth = 0;
  let line = 1;
  for (const char of structure) {
    if (char === "\n") line += 1;
    if (char === "(" || char === "[" || char === "{") depth += 1;
    if (char === ")" || char === "]" || char === "}") depth -= 1;
    if (depth > RULE_LIMITS.depth) {
      return `line ${line}: brackets are nested more than ${RULE_LIMITS.depth} deep; split the condition into simpler rules`;
    }
  }
  // The parser reads the whole set before any rule is checked on its own, so each stretch up to a `;` (Cedar ends
  // every rule with one, and an expression never spans it) is held to one rule's counts here.
  let start = 0;
  for (const stretch of structure.split(";")) {
    const overLimit = countsOverLimit(stretch);
    if (overLimit) return `line ${lineAt(structure, start + stretch.search(/\S|$/))}: the rule here ${overLimit}`;
    start += stretch.length + 1;
  }
  return null;
}

/** The first bound one rule passes, in words, or null (its operators are counted with the whole text's). */
export function ruleOverLimit(ruleText: string): string | null {
  if (ruleText.length <= RULE_LIMITS.ruleChars) return null;
  return `it is ${ruleText.length} characters long; a rule may have at most ${RULE_LIMITS.ruleChars}`;
}

/** Whether one rule's structure has more operators or `if`s than a rule may, as the end of a sentence; or null. */
function countsOverLimit(structure: string): string | null {
  const operators = structure.match(/&&|\|\||==|!=|<=|>=|[-+*<>!.[]|\b(?:has|like|in|is)\b/g)?.length ?? 0;
  if (operators > RULE_LIMITS.operatorsPerRule) {
    return `has ${operators} operators; a rule may have at most ${RULE_LIMITS.operatorsPerRule}`;
  }
  const ifs = structure.match(/\bif\b/g)?.length ?? 0;
  if (ifs > RULE_LIMITS.ifsPerRule)
    return `has ${ifs} if-expressions; a rule may have at most ${RULE_LIMITS.ifsPerRule}`;
  return null;
}
