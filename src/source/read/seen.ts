/** The representations a poll saw per field, for `lookout probe`. */

/** Field → representation → how many values were read in it. */
export type SeenForms = Record<string, Record<string, number>>;

/** Adds one row's representations to a poll's. */
export function mergeSeen(into: SeenForms, row: Record<string, string>): void {
  for (const [field, how] of Object.entries(row)) {
    const forms = (into[field] ??= {});
    forms[how] = (forms[how] ?? 0) + 1;
  }
}
