/**
 * A small GraphQL parser (no dependency): one query operation with variable definitions,
 * fields with arguments, aliases and nested selections, and all literal kinds. Enough for the
 * `metrics` query a client sends; fragments, directives and mutations are refused clearly.
 */

/** A GraphQL error reported to the caller in `errors[]` (HTTP 200). */
export class GraphQLError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GraphQLError';
  }
}

/** A value in the query: a literal or a variable reference. */
export type ValueNode =
  | { kind: 'variable'; name: string }
  | { kind: 'int' | 'float'; value: number }
  | { kind: 'string'; value: string }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'null' }
  | { kind: 'enum'; value: string }
  | { kind: 'list'; values: ValueNode[] }
  | { kind: 'object'; fields: { name: string; value: ValueNode }[] };

/** A selected field. */
export interface FieldNode {
  alias: string | null;
  name: string;
  args: { name: string; value: ValueNode }[];
  selections: FieldNode[] | null;
}

/** A parsed query operation. */
export interface OperationNode {
  name: string | null;
  variables: { name: string; type: string; defaultValue: ValueNode | null }[];
  selections: FieldNode[];
}

type Token = { kind: 'punct' | 'name' | 'int' | 'float' | 'string' | 'eof'; value: string; pos: number };

const PUNCT = new Set(['{', '}', '(', ')', ':', '$', '!', '[', ']', '=', '@']);

function lex(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === ',' || c === '\ufeff') {
      i++;
    } else if (c === '#') {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (src.startsWith('...', i)) {
      out.push({ kind: 'punct', value: '...', pos: i });
      i += 3;
    } else if (PUNCT.has(c)) {
      out.push({ kind: 'punct', value: c, pos: i++ });
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i, i + 256)) as RegExpExecArray;
      out.push({ kind: 'name', value: m[0], pos: i });
      i += m[0].length;
    } else if (/[-0-9]/.test(c)) {
      const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(src.slice(i, i + 64));
      if (!m) throw syntaxError(src, i, `Invalid number`);
      out.push({ kind: m[2] || m[3] ? 'float' : 'int', value: m[0], pos: i });
      i += m[0].length;
    } else if (c === '"') {
      if (src.startsWith('"""', i)) {
        const end = src.indexOf('"""', i + 3);
        if (end < 0) throw syntaxError(src, i, 'Unterminated string');
        out.push({ kind: 'string', value: src.slice(i + 3, end), pos: i });
        i = end + 3;
        continue;
      }
      let j = i + 1;
      let s = '';
      for (;;) {
        const d = src[j];
        if (d === undefined || d === '\n') throw syntaxError(src, i, 'Unterminated string');
        if (d === '"') break;
        if (d === '\\') {
          const e = src[j + 1];
          const map: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', '"': '"', '\\': '\\', '/': '/' };
          if (e === 'u') {
            s += String.fromCharCode(parseInt(src.slice(j + 2, j + 6), 16));
            j += 6;
          } else if (e !== undefined && map[e] !== undefined) {
            s += map[e];
            j += 2;
          } else throw syntaxError(src, j, 'Invalid escape sequence');
        } else {
          s += d;
          j++;
        }
      }
      out.push({ kind: 'string', value: s, pos: i });
      i = j + 1;
    } else {
      throw syntaxError(src, i, `Unexpected character "${c}"`);
    }
  }
  out.push({ kind: 'eof', value: '', pos: src.length });
  return out;
}

function syntaxError(src: string, pos: number, msg: string): GraphQLError {
  const before = src.slice(0, pos).split('\n');
  return new GraphQLError(`Syntax Error: ${msg} (line ${before.length}, column ${(before[before.length - 1] ?? '').length + 1})`);
}

/** Parses a document holding one query operation (or an anonymous selection set). */
export function parseQuery(src: string): OperationNode {
  const toks = lex(src);
  let k = 0;
  const peek = () => toks[k] as Token;
  const describe = (t: Token) => (t.kind === 'eof' ? '<EOF>' : t.kind === 'string' ? `string "${t.value}"` : `"${t.value}"`);
  const fail = (what: string): never => {
    throw syntaxError(src, peek().pos, `Expected ${what}, found ${describe(peek())}`);
  };
  const isPunct = (v: string) => peek().kind === 'punct' && peek().value === v;
  const expectPunct = (v: string) => (isPunct(v) ? toks[k++] : fail(`"${v}"`));
  const name = (): string => (peek().kind === 'name' ? (toks[k++] as Token).value : fail('Name'));

  const value = (constOnly: boolean): ValueNode => {
    const t = peek();
    if (t.kind === 'punct' && t.value === '$') {
      if (constOnly) fail('constant value');
      k++;
      return { kind: 'variable', name: name() };
    }
    if (t.kind === 'int' || t.kind === 'float') {
      k++;
      return { kind: t.kind, value: Number(t.value) };
    }
    if (t.kind === 'string') {
      k++;
      return { kind: 'string', value: t.value };
    }
    if (t.kind === 'name') {
      k++;
      if (t.value === 'true' || t.value === 'false') return { kind: 'boolean', value: t.value === 'true' };
      if (t.value === 'null') return { kind: 'null' };
      return { kind: 'enum', value: t.value };
    }
    if (isPunct('[')) {
      k++;
      const values: ValueNode[] = [];
      while (!isPunct(']')) values.push(value(constOnly));
      k++;
      return { kind: 'list', values };
    }
    if (isPunct('{')) {
      k++;
      const fields: { name: string; value: ValueNode }[] = [];
      while (!isPunct('}')) {
        const n = name();
        expectPunct(':');
        fields.push({ name: n, value: value(constOnly) });
      }
      k++;
      return { kind: 'object', fields };
    }
    return fail('value');
  };

  const typeRef = (): string => {
    let t: string;
    if (isPunct('[')) {
      k++;
      t = `[${typeRef()}]`;
      expectPunct(']');
    } else t = name();
    if (isPunct('!')) {
      k++;
      t += '!';
    }
    return t;
  };

  const selectionSet = (): FieldNode[] => {
    expectPunct('{');
    const fields: FieldNode[] = [];
    while (!isPunct('}')) {
      if (isPunct('...')) throw new GraphQLError('Fragments are not supported by this service');
      if (isPunct('@')) throw new GraphQLError('Directives are not supported by this service');
      let alias: string | null = null;
      let n = name();
      if (isPunct(':')) {
        k++;
        alias = n;
        n = name();
      }
      const args: { name: string; value: ValueNode }[] = [];
      if (isPunct('(')) {
        k++;
        while (!isPunct(')')) {
          const an = name();
          expectPunct(':');
          args.push({ name: an, value: value(false) });
        }
        k++;
      }
      if (isPunct('@')) throw new GraphQLError('Directives are not supported by this service');
      fields.push({ alias, name: n, args, selections: isPunct('{') ? selectionSet() : null });
    }
    k++;
    if (fields.length === 0) fail('Name');
    return fields;
  };

  let op: OperationNode;
  if (isPunct('{')) op = { name: null, variables: [], selections: selectionSet() };
  else {
    const kw = name();
    if (kw !== 'query') {
      if (kw === 'mutation' || kw === 'subscription') throw new GraphQLError(`${kw} operations are not supported by this service`);
      if (kw === 'fragment') throw new GraphQLError('Fragments are not supported by this service');
      k--;
      fail('"query" or "{"');
    }
    const opName = peek().kind === 'name' ? name() : null;
    const variables: OperationNode['variables'] = [];
    if (isPunct('(')) {
      k++;
      while (!isPunct(')')) {
        expectPunct('$');
        const vn = name();
        expectPunct(':');
        const type = typeRef();
        let defaultValue: ValueNode | null = null;
        if (isPunct('=')) {
          k++;
          defaultValue = value(true);
        }
        variables.push({ name: vn, type, defaultValue });
      }
      k++;
    }
    op = { name: opName, variables, selections: selectionSet() };
  }
  if (peek().kind !== 'eof') {
    if (peek().kind === 'name' && (peek().value === 'query' || peek().value === 'fragment')) throw new GraphQLError('Only one operation per request is supported');
    fail('<EOF>');
  }
  return op;
}
