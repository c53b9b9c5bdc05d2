/** The representations a poll saw per field, for `lookout probe`. */

/** Field → representation → how many values were read in it. */
export type SeenForms = Record<string, Record<string, number>>;

/** Adds one row's representations (field → how it was sent) to a poll's. */
export function mergeSeen(into: SeenForms, row: Record<string, string>): void {
  for (const [field, how] of Object.entries(row)) addForm(into, field, how, 1);
}

/** Adds the representations counted by another part of the poll (one network/code of `benchmarks`). */
export function mergeForms(into: SeenForms, from: SeenForms): void {
  for (const [field, forms] of Object.entries(from)) for (const [how, n] of Object.entries(forms)) addForm(into, field, how, n);
}

function addForm(into: SeenForms, field: string, how: string, n: number): void {
  const forms = (into[field] ??= {});
  forms[how] = (forms[how] ?? 0) + n;
}
