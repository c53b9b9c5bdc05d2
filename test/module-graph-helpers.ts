/**
 * What the built code loads, seen from a child Node process: a module hook (node:module `register`) reports every
 * module Node resolves, for tests that keep a package out of the daemon until it is needed (B6s).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The repository's root. */
export const root = join(import.meta.dirname, '..');
/** The file URL of a built module (`npm run build` first). */
export const dist = (p: string) => pathToFileURL(join(root, 'dist', p)).href;

/** Runs an ES module script with Node and returns what it printed. */
export function runScript(script: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: root, timeout: 30_000, env: { ...process.env, ...env }, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(stdout.trim());
    });
  });
}

/** Script lines that record every URL Node resolves from here on into \`resolved\`. */
export const RECORD = `
  const { register } = await import('node:module');
  const { MessageChannel } = await import('node:worker_threads');
  const { port1, port2 } = new MessageChannel();
  const resolved = [];
  port1.on('message', (url) => resolved.push(url));
  port1.unref();
  const hook = 'let port; export function initialize(d) { port = d.port; } export async function resolve(s, c, next) { const r = await next(s, c); port.postMessage(r.url); return r; }';
  register('data:text/javascript,' + encodeURIComponent(hook), import.meta.url, { data: { port: port2 }, transferList: [port2] });
  // Messages of one port arrive in order: once a fresh module's own resolution is back, every earlier one is too.
  const settle = async () => {
    const mark = 'data:text/javascript,//' + Math.random();
    await import(mark);
    while (!resolved.includes(mark)) await new Promise((r) => setImmediate(r));
  };
`;

/** A script expression: whether a module of package `pkg` was resolved (after {@link RECORD}). */
export const loaded = (pkg: string) => `(await settle(), resolved.some((u) => u.includes('/node_modules/${pkg}/')))`;
