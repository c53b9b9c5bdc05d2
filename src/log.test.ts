import { describe, expect, it } from 'vitest';
import { createLogger, resolveLogFormat } from './log.js';

describe('log formats', () => {
  it('json by default; text is one short line per event with key=value, quoted when needed, secrets scrubbed', () => {
    const lines: string[] = [];
    createLogger({ write: (l) => lines.push(l), base: { service: 'lookout' }, secrets: () => ['s3cret-key'] }).warn('poll', { poll: 'markets', error: 'GET /x?k=s3cret-key: 503' });
    createLogger({ format: 'text', write: (l) => lines.push(l), base: { service: 'lookout' }, secrets: () => ['s3cret-key'] }).warn('poll', { poll: 'markets', rows: 0, error: 'GET /x?k=s3cret-key: 503' });
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'warn', msg: 'poll', service: 'lookout', poll: 'markets' });
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d WARN  poll poll=markets rows=0 error="GET \/x\?k=\[redacted\]: 503"$/);
    expect(lines.join('\n')).not.toContain('s3cret-key');
  });

  it('auto is text on a terminal and json otherwise; an explicit format wins', () => {
    expect([resolveLogFormat('auto', true), resolveLogFormat('auto', false), resolveLogFormat(undefined, undefined), resolveLogFormat('json', true), resolveLogFormat('text', false)]).toEqual(['text', 'json', 'json', 'json', 'text']);
  });
});
