/** The representations a poll saw per field, for `lookout probe`. */

/** Field → representation → how many values were read in it. */
export type SeenForms = Record<string, Record<string, number>>;

/** Adds one row's representations (pairs: field, how it was sent, …; see FieldReader.seen) to a poll's. */
export function mergeSeen(into: SeenForms, row: readonly string[]): void {
  for (let i = 0; i + 1 < row.length; i += 2) addForm(into, row[i]!, row[i + 1]!, 1);
}

/** Adds the representations counted by another part of the poll (one network/code of `benchmarks`). */
export function mergeForms(into: SeenForms, from: SeenForms): void {
  for (const [field, forms] of Object.entries(from)) for (const [how, n] of Object.entries(forms)) addForm(into, field, how, n);
}

function addForm(into: SeenForms, field: string, how: string, n: number): void {
  const forms = (into[field] ??= {});
  forms[how] = (forms[how] ?? 0) + n;
}
