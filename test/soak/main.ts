/**
 * `npm run soak [-- --cycles N]`: the full soak (default 2,000 poll cycles) against the built daemon; prints the
 * per-100-cycle figures as a Markdown table, the trend of each, the backtest comparison and the secrets scan.
 * Exit 1 when a figure does not level, the histories differ, a secret leaked, or the daemon did not stop cleanly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSoak } from './soak.js';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : dflt;
};
const cycles = Number(arg('cycles', '2000'));
const dir = mkdtempSync(join(tmpdir(), 'lookout-soak-'));
try {
  const r = await runSoak({ cycles, dir, retention: arg('retention', '3m'), progress: (l) => console.error(l) });
  console.log(`soak: ${r.cycles} poll cycles (${r.okPolls} ok, ${r.failedPolls} failed) in ${r.seconds} s; exit ${JSON.stringify(r.exit)}; integrity_check ${r.integrity}\n`);
  console.log('| cycle | s | RSS MB | heap MB | open fds | DB MB | event-loop lag p99 ms |\n|---:|---:|---:|---:|---:|---:|---:|');
  for (const s of r.samples) console.log(`| ${s.cycle} | ${s.seconds} | ${s.rss_mb} | ${s.heap_mb} | ${s.fds} | ${s.db_mb} | ${s.lag_p99_ms} |`);
  console.log('\n| figure | mean, 2nd quartile | mean, last quartile | slope per 1,000 cycles | level |\n|---|---:|---:|---:|---|');
  for (const t of r.trends) console.log(`| ${t.figure} | ${t.q2} | ${t.q4} | ${t.slope_per_1000} | ${t.level ? 'yes' : 'NO'} |`);
  console.log(`\nbacktest vs live, episodes fired ${new Date(r.compared.from).toISOString()} → ${new Date(r.compared.to).toISOString()}: live ${r.compared.live}, backtest ${r.compared.backtest} episodes in total; ${r.compared.mismatches.length} mismatches`);
  for (const m of r.compared.mismatches) console.log(`  ${m}`);
  console.log(`delivered: ${r.delivered.slack} Slack posts, ${r.delivered.webhook} webhook bodies, ${r.delivered.email} emails`);
  console.log(`secrets scan: ${r.scanned.bytes} bytes, ${r.scanned.hits.length} hits ${r.scanned.hits.join(', ')}`);
  console.log(`faults:\n${r.faults.map((f) => `  ${f}`).join('\n')}`);
  const ok = r.exit.code === 0 && r.integrity === 'ok' && r.trends.every((t) => t.level) && r.compared.mismatches.length === 0 && r.scanned.hits.length === 0;
  process.exitCode = ok ? 0 : 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
