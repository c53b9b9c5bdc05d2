/**
 * What an active alert's labels were last found equal to, kept with its row in the engine's copy: the labels its
 * reading gave (all but those the rule sets) as one text, `key\0value\0…` in the reading's order.
 *
 * In an incident the engine checks every poll that each active alert's labels are still what its reading and rule
 * make (src/alerts/engine.ts, `sameLabels`). Comparing with the alert's labels object touched that object and each
 * of its texts: old objects, scattered, each a cache miss once 50,000 fresh readings have streamed past (issue 14,
 * B4). The reading's labels are compared with one text of the row instead, field by field, the texts compared whole.
 */

/** The separator of the text's fields; a label with it in its key or value is not kept as a text (see {@link labelsText}). */
const SEP = '\u0000';

/**
 * The text of a reading's labels but those in `over` (the ones the rule sets), or undefined when a key or value holds
 * the separator: then a text could read as other labels, and the alert's labels are compared as they are.
 */
export function labelsText(from: Readonly<Record<string, string>>, over: ReadonlySet<string>): string | undefined {
  let text = '';
  for (const k in from) {
    if (over.has(k)) continue;
    const v = from[k]!;
    if (k.includes(SEP) || v.includes(SEP)) return undefined;
    text += k + SEP + v + SEP;
  }
  return text;
}

/** Whether a reading's labels but those in `over` are, in order, the ones `text` ({@link labelsText}) was made of. */
export function sameAsText(text: string, from: Readonly<Record<string, string>>, over: ReadonlySet<string>): boolean {
  let at = 0;
  for (const k in from) {
    if (over.has(k)) continue;
    at = field(text, at, k);
    if (at < 0) return false;
    at = field(text, at, from[k]!);
    if (at < 0) return false;
  }
  return at === text.length;
}

/** Where the next field starts when the field of `text` at `at` is exactly `s` (no field holds the separator); else -1. */
function field(text: string, at: number, s: string): number {
  const end = text.indexOf(SEP, at);
  return end - at === s.length && text.startsWith(s, at) ? end + 1 : -1;
}

/** What an alert's labels were last found equal to, kept with the engine's copy of its row (`TrackedAlert.seen`). */
export interface LabelsSeen {
  /**
   * {@link labelsText} of the reading's labels; undefined where they hold the separator (then they are compared with
   * the alert's labels as they are, every time, but no text is made again for this labels object and rule).
   */
  readonly text: string | undefined;
  /** The alert's labels object it was found equal to: a step that gives the alert new labels makes it stale. */
  readonly labels: Readonly<Record<string, string>>;
  /** The rule it was found with: a reload's new rule makes it stale. */
  readonly rule: object;
  /** The labels the rule sets (the `over` of {@link labelsText}), kept with the text so that checking it needs no lookup. */
  readonly over: ReadonlySet<string>;
}
