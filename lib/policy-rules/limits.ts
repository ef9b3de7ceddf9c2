/**
 * Bounds checked on the rule text before the Cedar parser sees it: the wasm parser and evaluator recurse, and deep
 * nesting (200 brackets, 400 chained `+`, 400 nested `if`) overflows their stack and can leave the engine broken
 * for every later call. Cedar has no loops or recursion, so a rule within these bounds always finishes.
 */
export const RULE_LIMITS = {
  textChars: 40_000,
  ruleChars: 2_000,
  rules: 100,
  depth: 20,
  operatorsPerRule: 100,
  ifsPerRule: 20,
} as const;

/** The text without string literals and comments, so their content never counts as structure. */
function structureOf(text: string): string {
  return text.replace(/"(?:[^"\\]|\\.)*"?|\/\/[^\n]*/g, '""');
}

/** The first bound the whole text passes, in words, or null. */
export function textOverLimit(text: string): string | null {
  if (text.length > RULE_LIMITS.textChars) {
    return `the rule set is ${text.length} characters long; at most ${RULE_LIMITS.textChars} are allowed`;
  }
  let depth = 0;
  let line = 1;
  for (const char of structureOf(text)) {
    if (char === "\n") line += 1;
    if (char === "(" || char === "[" || char === "{") depth += 1;
    if (char === ")" || char === "]" || char === "}") depth -= 1;
    if (depth > RULE_LIMITS.depth) {
      return `line ${line}: brackets are nested more than ${RULE_LIMITS.depth} deep; split the condition into simpler rules`;
    }
  }
  return null;
}

/** The first bound one rule passes, in words, or null. */
export function ruleOverLimit(ruleText: string): string | null {
  if (ruleText.length > RULE_LIMITS.ruleChars) {
    return `it is ${ruleText.length} characters long; a rule may have at most ${RULE_LIMITS.ruleChars}`;
  }
  const structure = structureOf(ruleText);
  const operators = structure.match(/&&|\|\||==|!=|<=|>=|[-+*<>!.]|\b(?:has|like|in|is)\b/g)?.length ?? 0;
  if (operators > RULE_LIMITS.operatorsPerRule) {
    return `it has ${operators} operators; a rule may have at most ${RULE_LIMITS.operatorsPerRule}`;
  }
  const ifs = structure.match(/\bif\b/g)?.length ?? 0;
  if (ifs > RULE_LIMITS.ifsPerRule)
    return `it has ${ifs} if-expressions; a rule may have at most ${RULE_LIMITS.ifsPerRule}`;
  return null;
}
