/**
 * Permission requests from agents over ACP arrive as questions whose options read "<name> (<kind>)" (the kind,
 * `allow_once` … `reject_always`, is what an answer is matched by: engine/acp/permissions.ts). On a notification button
 * the kind in brackets only crowds the name out ("Allow (allo…"): a button shows the name alone, unless two options
 * would then read the same, or the name is empty.
 */
const KIND_SUFFIX = / \((?:allow|reject)_(?:once|always)\)$/;

/** The button label of each option, in the same order. */
export function optionButtonLabels(options: readonly string[]): string[] {
  const short = options.map((option) => option.replace(KIND_SUFFIX, ''));
  return short.map((label, i) => (label.trim() && short.indexOf(label) === short.lastIndexOf(label) ? label : options[i]!));
}
