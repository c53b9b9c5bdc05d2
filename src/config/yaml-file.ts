/** A YAML file parsed with positions kept, so every later problem can be reported as file:line:col. */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node } from 'yaml';
import type { ConfigProblem } from '../errors.js';
import { interpolate } from './env.js';

/**
 * A parsed YAML file: its JS value (after env interpolation) and what is needed to locate a path in it. `value` is
 * undefined only when the YAML itself is broken; an unset `${VAR}` is a problem, read as empty so the rest of the file
 * is still checked.
 */
export interface YamlFile {
  file: string;
  doc: Document;
  lineCounter: LineCounter;
  value: unknown;
  problems: ConfigProblem[];
  /** Whether the YAML parsed (no syntax error): then `value` holds the document. */
  parsed: boolean;
}

const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/** Parses `text` (the content of `file`), reporting syntax errors and unset `${VAR}`s (read as empty) with their positions. */
export function parseYamlFile(file: string, text: string, env: NodeJS.ProcessEnv = process.env): YamlFile {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const problems: ConfigProblem[] = [];
  for (const e of [...doc.errors]) {
    const pos = lineCounter.linePos(e.pos[0]);
    problems.push({ file, line: pos.line, col: pos.col, message: firstLine(e.message) });
  }
  if (problems.length === 0) {
    visit(doc, {
      Scalar(_key, node) {
        if (typeof node.value !== 'string' || !node.value.includes('$')) return;
        const { value, missing } = interpolate(node.value, env);
        for (const name of missing) {
          const pos = lineCounter.linePos(node.range?.[0] ?? 0);
          problems.push({
            file,
            line: pos.line,
            col: pos.col,
            message: `environment variable ${name} is not set (write \${${name}:-default} to give a default)`,
          });
        }
        // A plain (unquoted) scalar that becomes a number or boolean is read as one, as YAML would have.
        if (node.type === 'PLAIN' && NUMBER.test(value)) node.value = Number(value);
        else if (node.type === 'PLAIN' && (value === 'true' || value === 'false')) node.value = value === 'true';
        else node.value = value;
      },
    });
  }
  const parsed = doc.errors.length === 0;
  const value = parsed ? doc.toJS({ maxAliasCount: 100 }) : undefined;
  return { file, doc, lineCounter, value, problems, parsed };
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
}

/** Finds the position of `path` in the file: the node at the path, or its nearest existing parent. `key` points at a map key instead of its value. */
export function locate(
  yf: YamlFile,
  path: readonly PropertyKey[],
  opts: { key?: string } = {},
): { line: number; col: number } {
  let node: unknown = yf.doc.contents;
  let best: Node | null = (node as Node | null) ?? null;
  for (const seg of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === seg);
      if (!pair) break;
      node = pair.value;
      best = (pair.value as Node | null) ?? (pair.key as Node | null) ?? best;
    } else if (isSeq(node) && typeof seg === 'number') {
      node = node.items[seg];
      if (!node) break;
      best = node as Node;
    } else break;
  }
  if (opts.key && isMap(node)) {
    const pair = node.items.find((p) => isScalar(p.key) && p.key.value === opts.key);
    if (pair && isScalar(pair.key)) best = pair.key;
  }
  const offset = best?.range?.[0] ?? 0;
  return yf.lineCounter.linePos(offset);
}

/** A problem at `path` in `yf`. */
export function problemAt(yf: YamlFile, path: readonly PropertyKey[], message: string, key?: string): ConfigProblem {
  const pos = locate(yf, path, key ? { key } : {});
  return { file: yf.file, line: pos.line, col: pos.col, message };
}
