/**
 * The keys every rule shares (src/rules/schema.ts, SPEC §3): what a rule means when they are left out, which names
 * a rule may have, and that the schema built from the registry reads every kind's rule and refuses an unknown key.
 */
import { describe, expect, it } from 'vitest';
import { ruleSchema } from '../src/config/load.js';
import { ruleKinds } from '../src/rules/registry.js';

const minimal: Record<string, Record<string, unknown>> = {
  utilization_above: { threshold: 0.9 },
  apy_jump: { window: '1h', min_change: 0.05 },
  oracle_lag: { max_lag: '10m' },
  unverified_position: { min_value_usd: 10_000 },
  stale_benchmark: {},
  price_deviation: { max_deviation: 0.02 },
  threshold: { field: 'borrow_apy', op: '>', value: 0.25 },
};

describe('a rule', () => {
  it('left at the shared defaults: warning, no for, no keep_firing_for, no select, labels or annotations, absent after 3 polls, enabled', () => {
    expect(ruleSchema.parse({ name: 'util', kind: 'utilization_above', threshold: 0.9 })).toEqual({
      name: 'util',
      kind: 'utilization_above',
      threshold: 0.9,
      severity: 'warning',
      for: 0,
      keep_firing_for: 0,
      select: {},
      labels: {},
      annotations: {},
      absent_for: 3,
      enabled: true,
    });
  });

  it('of every kind the registry lists is read with its own parameters; a key no kind has is refused', () => {
    for (const k of ruleKinds) {
      const raw = { name: `r-${k.kind}`, kind: k.kind, ...(minimal[k.kind] ?? {}) };
      const parsed = ruleSchema.safeParse(raw);
      expect({ kind: k.kind, ok: parsed.success, issues: parsed.error?.issues }).toMatchObject({ kind: k.kind, ok: true });
      expect(ruleSchema.safeParse({ ...raw, treshold: 1 }).success).toBe(false);
    }
    expect(Object.keys(minimal).sort()).toEqual(ruleKinds.map((k) => k.kind).sort());
  });

  it.each(['util', 'util-critical', 'apy_jump.borrow', 'team:risk', 'A9'])('may be named %s', (name) => {
    expect(ruleSchema.safeParse({ name, kind: 'utilization_above', threshold: 0.9 }).success).toBe(true);
  });

  it.each(['a b', '/util', 'util/', 'ütil', ''])('may not be named %j: the name rides in fingerprints, URLs and labels', (name) => {
    const r = ruleSchema.safeParse({ name, kind: 'utilization_above', threshold: 0.9 });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => [i.path, i.message])).toContainEqual([['name'], 'rule names use letters, digits, _ . : - only']);
  });

  it.each(['source_down', 'watchdog'])("may not take the built-in alert's name %s", (name) => {
    const r = ruleSchema.safeParse({ name, kind: 'utilization_above', threshold: 0.9 });
    expect(r.error?.issues.map((i) => [i.path, i.message])).toEqual([[['name'], "source_down and watchdog are the names of lookout's built-in alerts; choose another"]]);
  });
});
