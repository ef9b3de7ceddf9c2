// Which of the names a model was offered it most likely meant by one it was not (`get_ordr`, `issueRefund`).

/** Case, `-` and `_` set aside: `issueRefund`, `issue-refund` and `Issue_Refund` read as one name. */
const folded = (name: string) => name.toLowerCase().replace(/[-_]/g, "");

/** Levenshtein's distance: the fewest characters inserted, removed or replaced to make `a` into `b`. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length];
}

/**
 * Of `offered`, the name `called` most likely misspells: once case, `-` and `_` are set aside, at most one edit in four
 * of the name's length away (at least one), the nearest so, then the nearest as written. Null when none is that near,
 * or when two are equally near: a guess between two tools would mislead.
 */
export function nearestName(called: string, offered: readonly string[]): string | null {
  const target = folded(called);
  const near = [...new Set(offered)].flatMap((name) => {
    const candidate = folded(name);
    const allowed = Math.max(1, Math.floor(candidate.length / 4));
    // Lengths further apart than that cannot be near; a long name costs nothing to turn down.
    if (Math.abs(candidate.length - target.length) > allowed) return [];
    const distance = editDistance(target, candidate);
    return distance > allowed ? [] : [{ name, distance, written: editDistance(called, name) }];
  });
  near.sort((a, b) => a.distance - b.distance || a.written - b.written);
  const [first, second] = near;
  if (!first || (second && second.distance === first.distance && second.written === first.written)) return null;
  return first.name;
}
