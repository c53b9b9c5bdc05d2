/**
 * How config.example.yaml is held to "every key, with a comment": a walk of the config's JSON Schema against the
 * example, with its commented-out keys switched on. Used by test/first-run.test.ts.
 */
import { isMap, isScalar, isSeq, LineCounter, Parser, parseDocument } from 'yaml';

/** The slice of JSON Schema that lookout.schema.json uses for structure. */
export interface JsonSchema {
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
}

/**
 * Keys config.example.yaml need not show: a rule kind's own parameters (`threshold`, `max_lag`, …). The example
 * delegates rules to rules/*.yaml (`rules.files`), whose starter rules show them with a comment saying why, and
 * README §Rules tables the kinds and their parameters; the test checks that each is named in one or the other.
 * The keys every rule has (`name`, `for`, `select`, …) are not exempt: the example shows them in a commented-out
 * `rules.inline` rule.
 */
export const EXEMPT = /^rules\.inline\[\]\(kind=[^)]*\)\./;

/**
 * The example with its commented-out YAML switched on: a comment line whose text after `# ` starts with
 * `key:` or `- ` loses that `# ` (the indentation before `#` stays), so `  # token: x` becomes `  token: x`.
 * Line numbers don't move. The first line's `# yaml-language-server: $schema=…` stays a comment.
 */
export function uncommentExamples(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      const m = /^(\s*)# (\s*(?:- |[A-Za-z_][\w.-]*:(?:\s|$)).*)$/.exec(line);
      return m && !line.startsWith('# yaml-language-server:') ? m[1]! + m[2]! : line;
    })
    .join('\n');
}

function alternativesOf(s: JsonSchema): JsonSchema[] {
  return [...(s.anyOf ?? []), ...(s.oneOf ?? [])];
}

/** The property every alternative of a union pins to a constant (a poll's `kind`, a notifier's `type`), if any. */
function discriminatorOf(alts: JsonSchema[]): string | undefined {
  if (alts.length < 2 || !alts.every((a) => a.properties)) return undefined;
  return Object.keys(alts[0]!.properties!).find((k) => alts.every((a) => a.properties![k]?.const !== undefined));
}

/** How a key is named in a report: `polls[].name` when every alternative has it, else `polls[](kind=metrics).markets`. */
function keyPath(path: string, key: string, alts: JsonSchema[], alt: JsonSchema | undefined, d: string | undefined): string {
  const shared = !d || alts.every((a) => a.properties?.[key] !== undefined);
  return shared ? (path ? `${path}.${key}` : key) : `${path}(${d}=${String(alt!.properties![d]!.const)}).${key}`;
}

/** Every key path the schema allows: object properties, array items (`[]`), record values (`*`), each union's alternatives. */
export function schemaKeyPaths(s: JsonSchema, path = '', out = new Set<string>()): Set<string> {
  const alts = alternativesOf(s);
  const d = discriminatorOf(alts);
  const objects = [s, ...alts].filter((o) => o.properties);
  for (const o of objects) {
    for (const [key, sub] of Object.entries(o.properties!)) {
      const p = keyPath(path, key, alts, o, o === s ? undefined : d);
      out.add(p);
      schemaKeyPaths(sub, p, out);
    }
  }
  for (const o of [s, ...alts]) {
    if (o.items) schemaKeyPaths(o.items, `${path}[]`, out);
    if (typeof o.additionalProperties === 'object') schemaKeyPaths(o.additionalProperties, `${path}.*`, out);
  }
  return out;
}

/**
 * What config.example.yaml fails to document, walking the config's JSON Schema. The rule:
 *
 * - Every key path the schema allows must appear: object properties, array items (`[]`), record values
 *   (`*`: notifier names, label names are the user's own and need no comment), and unions. In a union whose
 *   alternatives each pin a constant (`kind` of a poll or rule, `type` of a notifier), an alternative's own
 *   keys are checked as `path(kind=X).key`, so each kind and type needs an entry of its own; keys every
 *   alternative has (`polls[].name`, `notifiers.*.type`) are checked once. {@link EXEMPT} lists what need not.
 * - Commented out counts: see {@link uncommentExamples}. So write a commented-out key at the indentation it
 *   would have, one key per line, and start no prose comment with `word:`; the next test checks that the
 *   result is a valid config, which also catches typos in commented-out keys.
 * - Documented: at least one occurrence of each key has a comment on its own line (`key: v  # …`; one comment
 *   covers a one-line `{ flow: map }`) or on a comment-only line directly above it (no blank line between;
 *   a commented-out key above is a key, not a comment).
 */
export function exampleDocProblems(exampleText: string, schema: JsonSchema): { missing: string[]; uncommented: string[]; unknown: string[] } {
  const text = uncommentExamples(exampleText);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  if (doc.errors.length > 0) throw new Error(`config.example.yaml, commented-out examples switched on, is not YAML: ${doc.errors.map((e) => e.message).join('; ')}`);
  const lineOf = (offset: number) => lines.linePos(offset).line;
  const commentLines = new Set<number>();
  const collectComments = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(collectComments);
    else if (node && typeof node === 'object') {
      const t = node as { type?: unknown; offset?: unknown };
      if (t.type === 'comment' && typeof t.offset === 'number') commentLines.add(lineOf(t.offset));
      Object.values(node).forEach(collectComments);
    }
  };
  for (const token of new Parser().parse(text)) collectComments(token);
  const textLines = text.split('\n');
  const documented = (line: number) => commentLines.has(line) || /^\s*#/.test(textLines[line - 2] ?? '');

  const seen = new Map<string, { lines: number[]; commented: boolean }>();
  const unknown: string[] = [];
  const walk = (node: unknown, s: JsonSchema, path: string): void => {
    const alts = alternativesOf(s);
    if (isSeq(node)) {
      const items = [s, ...alts].find((o) => o.items)?.items;
      if (items) for (const item of node.items) walk(item, items, `${path}[]`);
      return;
    }
    if (!isMap(node)) return;
    const d = discriminatorOf(alts);
    let objects = [s, ...alts].filter((o) => o.properties);
    if (d) {
      const tag = node.get(d);
      const alt = alts.find((a) => a.properties![d]!.const === tag);
      if (!alt) {
        unknown.push(`${path || '(top)'}: an entry with ${d} '${String(tag)}', which is none of the schema's`);
        return;
      }
      objects = [alt];
    }
    const record = [s, ...alts].map((o) => o.additionalProperties).find((a): a is JsonSchema => typeof a === 'object');
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const line = isScalar(pair.key) && pair.key.range ? lineOf(pair.key.range[0]) : 0;
      const owner = objects.find((o) => o.properties![key]);
      if (owner) {
        const p = keyPath(path, key, alts, owner, owner === s ? undefined : d);
        if (EXEMPT.test(p)) continue;
        const entry = seen.get(p) ?? { lines: [], commented: false };
        entry.lines.push(line);
        entry.commented ||= documented(line);
        seen.set(p, entry);
        walk(pair.value, owner.properties![key]!, p);
      } else if (record) {
        walk(pair.value, record, `${path}.*`);
      } else if (objects.length > 0) {
        unknown.push(`${path ? `${path}.` : ''}${key} (line ${line})`);
      }
    }
  };
  walk(doc.contents, schema, '');

  return {
    missing: [...schemaKeyPaths(schema)].filter((p) => !EXEMPT.test(p) && !seen.has(p)),
    uncommented: [...seen].filter(([, e]) => !e.commented).map(([p, e]) => `${p} (line ${e.lines.join(', ')})`),
    unknown,
  };
}
