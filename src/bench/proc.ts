/** Memory figures of a process from Linux's /proc: a module of its own, so the measured daemon child loads nothing more for it. */
import { readFileSync } from 'node:fs';

/** A `kB` line of `/proc/<pid>/status` (`VmRSS`, `RssAnon`: private memory, `RssFile`: mapped files such as the node binary), in MB; NaN when the line is missing. */
export function procStatusMb(pid: number | 'self', field: 'VmRSS' | 'RssAnon' | 'RssFile'): number {
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return kb === undefined ? NaN : Number(kb) / 1000;
}
