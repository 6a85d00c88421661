/*
 * A person types the short id they see (`t_b9b484f9` in the editor and `caesar ps`), not the 34 characters of a task
 * folder's name. Any prefix that names exactly one task of the root is that task, as git takes an unambiguous
 * abbreviated commit; an exact folder name always wins, so a prefix can never shadow a whole id.
 */

import { SHORT_ID_LENGTH } from '../../protocol';

/** How many ambiguous candidates an error lists before it says "and N more". */
const LISTED_CANDIDATES = 5;

export type PrefixMatch =
  | { kind: 'exact' | 'unique'; id: string }
  | { kind: 'ambiguous'; candidates: string[] }
  | { kind: 'none' };

/** Which of `ids` the typed `given` names: itself, the one id it begins, several, or none. */
export function matchTaskIdPrefix(ids: readonly string[], given: string): PrefixMatch {
  if (ids.includes(given)) return { kind: 'exact', id: given };
  if (!given) return { kind: 'none' };
  const candidates = ids.filter((id) => id.startsWith(given)).sort();
  if (candidates.length === 1) return { kind: 'unique', id: candidates[0]! };
  return candidates.length ? { kind: 'ambiguous', candidates } : { kind: 'none' };
}

/** '"t_ab" is the start of 3 task ids (t_ab12cd34ef, …): type more of it.', each candidate as short as tells it apart. */
export function ambiguousIdMessage(given: string, candidates: readonly string[]): string {
  const length = distinctPrefixLength(candidates, SHORT_ID_LENGTH);
  const listed = candidates.slice(0, LISTED_CANDIDATES).map((id) => id.slice(0, length));
  const more = candidates.length > LISTED_CANDIDATES ? `, and ${candidates.length - LISTED_CANDIDATES} more` : '';
  return `"${given}" is the start of ${candidates.length} task ids (${listed.join(', ')}${more}): type more of it.`;
}

/**
 * The shortest prefix length, at least `min`, at which every id of `ids` is told apart from the others: what a list
 * shows so that each short id it prints is accepted back. Ids are sorted first: only neighbours can share a prefix.
 */
export function distinctPrefixLength(ids: readonly string[], min: number): number {
  const sorted = [...ids].sort();
  let length = min;
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1]!;
    const b = sorted[i]!;
    let shared = 0;
    while (shared < a.length && shared < b.length && a[shared] === b[shared]) shared++;
    length = Math.max(length, Math.min(shared + 1, Math.max(a.length, b.length)));
  }
  return length;
}
