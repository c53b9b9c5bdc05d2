/**
 * README "Previewing a message", run as written: the `lookout render` line of the section, read out of README.md,
 * as a child process of the built CLI from the repository root, against the shipped config example, starter rules
 * and fixture. It must fire, render the starter rule's summary, and print the lines the README shows.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readmeCommands } from './readme-commands.js';

/** The ```text block of a README section: the output it shows. */
function shownOutput(heading: string): string[] {
  const section = readFileSync('README.md', 'utf8').split(`### ${heading}\n`)[1]?.split(/\n#{1,3} /)[0] ?? '';
  const block = /```text\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block.split('\n').filter((l) => l.trim() !== '');
}

describe('README: Previewing a message', () => {
  it('renders the shipped fixture exactly as the README shows it', () => {
    expect(existsSync('dist/cli.js'), 'run `npm run build` first (npm test does)').toBe(true);
    const commands = readmeCommands('Previewing a message');
    expect(commands.map((c) => c.args[0])).toEqual(['render']);
    const fixture = commands[0]!.args[commands[0]!.args.indexOf('--fixture') + 1]!;
    expect(fixture, 'the README shows a fixture shipped under rules/fixtures/').toMatch(/^rules\/fixtures\/.+\.ya?ml$/);

    const r = spawnSync(process.execPath, ['dist/cli.js', ...commands[0]!.args], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    // It fires on the fixture (no "would not fire" note), with the starter rule's own summary.
    expect(r.stdout).not.toMatch(/^note:/m);
    expect(r.stdout).toMatch(/^\S+ \S+ UTC FIRING warning market-borrow-apy-jump /m);
    expect(r.stdout).toContain('WETH/USDC on base: borrow APY 3.1% → 9.12% within 1h');
    // Every line the README shows is printed; `…` stands for text left out.
    const shown = shownOutput('Previewing a message');
    expect(shown.length).toBeGreaterThan(2);
    const printed = r.stdout.split('\n');
    for (const line of shown) {
      const parts = line.split('…').map((p) => p.trim()).filter(Boolean);
      if (parts.length === 0) continue;
      expect(printed.some((p) => parts.every((part) => p.includes(part))), `README line not printed: ${line}\n${r.stdout}`).toBe(true);
    }
  }, 40_000);
});
