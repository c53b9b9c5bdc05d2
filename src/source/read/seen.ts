/** The representations a poll saw per field, for `lookout probe`. */

/** Field → representation → how many values were read in it. */
export type SeenForms = Record<string, Record<string, number>>;

/** Adds the representations counted by another part of the poll (one network/code of `benchmarks`). */
export function mergeForms(into: SeenForms, from: SeenForms): void {
  for (const [field, forms] of Object.entries(from)) for (const [how, n] of Object.entries(forms)) addForm(into, field, how, n);
}

function addForm(into: SeenForms, field: string, how: string, n: number): void {
  const forms = (into[field] ??= {});
  forms[how] = (forms[how] ?? 0) + n;
}

/** One field's forms and their counts, in the order first seen. */
interface FieldForms {
  forms: string[];
  counts: number[];
}

/**
 * A poll's forms seen, counted as rows are kept: a map by field of a short list of forms (a reader's forms are a
 * handful of constant texts), not an object per row walked again.
 */
export class FormCounts {
  private readonly fields = new Map<string, FieldForms>();

  /** Counts one value of `field` read in `form`. */
  add(field: string, form: string): void {
    let f = this.fields.get(field);
    if (!f) this.fields.set(field, (f = { forms: [], counts: [] }));
    const i = f.forms.indexOf(form);
    if (i < 0) {
      f.forms.push(form);
      f.counts.push(1);
    } else f.counts[i]!++;
  }

  /** The counts as {@link SeenForms}: fields and forms in the order first seen. */
  toSeenForms(): SeenForms {
    const out: SeenForms = {};
    for (const [field, f] of this.fields) for (let i = 0; i < f.forms.length; i++) addForm(out, field, f.forms[i]!, f.counts[i]!);
    return out;
  }
}
