/**
 * The alert lifecycle as a pure function: (previous state, one signal, now) → next state + events.
 *
 *   inactive ──breach──▶ pending ──`for` elapsed──▶ firing ──ok (after keep_firing_for)──▶ resolved
 *       ▲                  │ ok / absent: cancelled                    │ absent_for polls: resolved
 *       └──────────────────┘                                           ▼
 *                                            resolved ──breach──▶ pending / firing again
 *
 * `wait` and `data_error` verdicts change nothing (a data error is handed back to be counted); a failed poll changes
 * nothing at all. Flapping: more than `flap_threshold` changes into firing or resolved within `flap_window` set
 * `flapping`, emit one `flapping` event, and silence firing/resolved/pending/cancelled events until the alert has
 * not changed for `flap_window`; then one `settled` event carries the state it settled in.
 */
import { createHash } from 'node:crypto';
import type { Alert, AlertEvent, AlertState, Severity } from '../model.js';
import type { Verdict } from '../rules/rule-kind.js';
import type { LabelsSeen } from './labels-seen.js';

/** The per-rule timings the lifecycle applies, all durations in ms. */
export interface LifecycleSettings {
  for: number;
  keep_firing_for: number;
  /** Consecutive successful polls an entity may be missing from before its alert resolves. */
  absent_for: number;
  flap_threshold: number;
  flap_window: number;
}

/** What a new alert is made of, when there is no previous state. */
export interface AlertIdentity {
  rule: string;
  kind: string;
  entity: string;
  severity: Severity;
}

/**
 * Labels and annotations of an alert; built lazily, only for alerts that are (or become, or stop being) active. A
 * describer is given the alert's current ones: where its own would be equal it may return those same objects (an
 * alert judged again every poll then keeps its maps), and whatever it returns the alert keeps, never changed after.
 */
export interface AlertDescription {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** One thing that happened to a (rule, entity) pair. */
export type Signal =
  /** A reading of the entity was judged. */
  | { type: 'verdict'; verdict: Verdict; data_at?: number | null; block?: number | null; describe?: (current: Readonly<AlertDescription>) => AlertDescription }
  /** A successful poll that last saw the entity did not return it (or it no longer matches the rule's select). */
  | { type: 'absent' }
  /** The poll that feeds the rule failed: changes nothing. */
  | { type: 'failed_poll' }
  /** Time passed: `for`, keep_firing_for and flap settling are checked. */
  | { type: 'tick' }
  /** The rule is gone (removed or disabled on reload): resolve or cancel now, flapping or not. */
  | { type: 'retire' };

/** Input of {@link step}. */
export interface StepInput {
  signal: Signal;
  now: number;
  settings: LifecycleSettings;
  /** Used when there is no previous state. */
  identity: AlertIdentity;
}

/**
 * An alert with the lifecycle's private bookkeeping, persisted beside it but never part of the shared
 * {@link Alert} shape: `cleared_at` is when the condition stopped holding while firing (keep_firing_for runs from it).
 */
export interface TrackedAlert {
  alert: Alert;
  cleared_at: number | null;
  /**
   * Where its moving columns are stored (`alert_moving.id`, schema 14): set by the repository on the rows it reads and
   * saves, so the engine's write of a judged reading finds the row by an integer (src/alerts/repo.ts). A step's next
   * state keeps its previous state's (the same alert, the same row); a new alert has none until it is saved.
   */
  moving_id?: number;
  /**
   * What the engine last found this alert's labels equal to (src/alerts/labels-seen.ts), kept with its copy of the row.
   * Declared here and set (to undefined) wherever a row is made, so that every row has one shape from the start: the
   * engine's hot loop reads it on every active alert of an incident.
   */
  seen?: LabelsSeen | undefined;
}

/** Output of {@link step}. */
export interface StepResult {
  next: TrackedAlert;
  events: AlertEvent[];
  /** Set when the signal was a `data_error` verdict: the engine counts and reports it; no state changed. */
  dataError?: string;
}

/** Stable id of (rule name, entity): the first 16 hex digits of a sha256. */
export function fingerprint(rule: string, entity: string): string {
  return createHash('sha256').update(rule).update('\u0000').update(entity).digest('hex').slice(0, 16);
}

/** Whether an alert counts as active (pending or firing). */
export function isActive(a: Pick<Alert, 'state'> | undefined): boolean {
  return a !== undefined && (a.state === 'pending' || a.state === 'firing');
}

/** A fresh, inactive alert for `id`. */
export function newAlert(id: AlertIdentity, now: number): Alert {
  return {
    fingerprint: fingerprint(id.rule, id.entity),
    rule: id.rule,
    kind: id.kind,
    entity: id.entity,
    state: 'inactive',
    flapping: false,
    severity: id.severity,
    labels: {},
    annotations: {},
    value: null,
    threshold: null,
    previous_value: null,
    peak: null,
    data_at: null,
    block: null,
    pending_since: null,
    firing_since: null,
    resolved_at: null,
    last_eval_at: now,
    last_notified_at: null,
    absent_polls: 0,
    changes: [],
  };
}

/** A deep-enough copy, for an event: the arrays and maps of an event's alert are its own. */
export function cloneAlert(a: Alert): Alert {
  return { ...a, labels: { ...a.labels }, annotations: { ...a.annotations }, changes: [...a.changes] };
}

/** A finite number as it is; NaN, ±Infinity, null and undefined as null: how an alert keeps (and the store holds) a value. */
export const finite = (v: number | null | undefined): number | null => (Number.isFinite(v) ? (v as number) : null);

/** The value farther from the threshold, in the direction the value crossed it (max when above, min when below). */
function morePeak(peak: number | null, value: number | null, threshold: number | null): number | null {
  if (value === null) return peak;
  if (peak === null) return value;
  const below = threshold !== null && value < threshold && peak < threshold;
  return below ? Math.min(peak, value) : Math.max(peak, value);
}

/**
 * Applies one signal to the previous state of a (rule, entity) pair. Pure: `prev` is never modified. The next state
 * shares the maps and the list of `prev` that did not change (a step replaces them, never changes them in place): an
 * incident judges thousands of active alerts a poll, and copying each one's labels and annotations twice was a
 * good part of their cost (issue 14, B4).
 */
export function step(prev: TrackedAlert | undefined, input: StepInput): StepResult {
  const { signal, now, settings } = input;
  if (signal.type === 'failed_poll') {
    return { next: prev ?? { alert: newAlert(input.identity, now), cleared_at: null, moving_id: undefined, seen: undefined }, events: [] };
  }
  const a = prev ? { ...prev.alert } : newAlert(input.identity, now);
  const s: Stepping = { alert: a, cleared_at: prev?.cleared_at ?? null, events: [], now, settings };
  let dataError: string | undefined;

  switch (signal.type) {
    case 'verdict': {
      const v = signal.verdict;
      a.absent_polls = 0;
      if (v.status === 'wait') break;
      if (v.status === 'data_error') {
        dataError = v.reason;
        break;
      }
      const wasActive = isActive(a);
      if (!wasActive && v.status === 'ok') {
        a.last_eval_at = now;
        break; // a dormant alert judged fine again: nothing to record
      }
      a.kind = input.identity.kind;
      a.severity = input.identity.severity;
      if (signal.describe) {
        // It reads only the current labels and annotations: the moving columns may move before or after.
        const d = signal.describe(a);
        a.labels = d.labels;
        a.annotations = d.annotations;
      }
      if (v.status === 'breach') {
        if (!wasActive) startEpisode(s);
        takeBreach(s, v, signal.data_at, signal.block, now);
        if (!wasActive) {
          if (settings.for <= 0) fire(s);
          else moveTo(s, 'pending');
        } else if (a.state === 'pending' && a.pending_since !== null && now - a.pending_since >= settings.for) fire(s);
      } else {
        takeReading(a, v, signal.data_at, signal.block, now);
        if (a.state === 'pending') cancel(s);
        else {
          s.cleared_at ??= now;
          if (now - s.cleared_at >= settings.keep_firing_for) resolve(s);
        }
      }
      break;
    }
    case 'absent': {
      if (!isActive(a)) break;
      a.absent_polls += 1;
      if (a.absent_polls >= settings.absent_for) {
        if (a.state === 'pending') cancel(s);
        else resolve(s);
      }
      break;
    }
    case 'tick':
      timers(s);
      break;
    case 'retire': {
      const wasFlapping = a.flapping;
      a.flapping = false;
      a.changes = [];
      if (a.state === 'pending' && !wasFlapping) cancel(s);
      else if (a.state === 'firing' || wasFlapping) {
        // A flapping alert already told people it was unstable: they hear that it is over, whatever state it is in
        // (pending or inactive again included: cancelling it would drop it from its group without a word).
        if (a.state !== 'resolved') a.resolved_at = now;
        a.state = 'resolved';
        s.cleared_at = null;
        emit(s, 'resolved');
      }
      break;
    }
  }

  if (a.flapping) {
    const last = a.changes.length > 0 ? a.changes[a.changes.length - 1]! : -Infinity;
    if (now - last >= settings.flap_window) {
      a.flapping = false;
      a.changes = [];
      emit(s, 'settled');
    }
  }
  const next: TrackedAlert = { alert: a, cleared_at: s.cleared_at, moving_id: prev?.moving_id, seen: undefined };
  return dataError !== undefined ? { next, events: s.events, dataError } : { next, events: s.events };
}

/** The columns a judged reading moves, from its verdict: evaluation time, value, threshold, previous value, data time, block. */
function takeReading(a: Alert, v: Extract<Verdict, { status: 'breach' | 'ok' }>, dataAt: number | null | undefined, block: number | null | undefined, now: number): void {
  a.last_eval_at = now;
  a.previous_value = v.previous !== undefined ? finite(v.previous) : a.value;
  a.value = finite(v.value);
  a.threshold = finite(v.threshold);
  a.data_at = dataAt ?? a.data_at;
  a.block = block ?? a.block;
}

/**
 * The columns a breach verdict moves, {@link step}'s and {@link breachInPlace}'s alike: those of a judged reading, the
 * absent polls (none), the episode's peak (after {@link startEpisode}, the value itself) and `cleared_at` (none).
 */
function takeBreach(t: TrackedAlert, v: Extract<Verdict, { status: 'breach' | 'ok' }>, dataAt: number | null | undefined, block: number | null | undefined, now: number): void {
  const a = t.alert;
  takeReading(a, v, dataAt, block, now);
  a.absent_polls = 0;
  a.peak = morePeak(a.peak, a.value, a.threshold);
  t.cleared_at = null;
}

/**
 * Whether a breach verdict leaves the standing of `t` alone — its state, times, flapping, kind and severity (the
 * labels are the caller's to compare): a firing alert, or a pending one still short of its `for`, not flapping. What
 * {@link step} then does moves only the columns of a judged reading, and no event: {@link breachInPlace} does it
 * without a step's copies. In an incident that is nearly every active alert of every poll (issue 14, B4).
 */
export function breachKeepsStanding(t: TrackedAlert, now: number, settings: LifecycleSettings, identity: Pick<AlertIdentity, 'kind' | 'severity'>): boolean {
  const a = t.alert;
  if (a.flapping || a.kind !== identity.kind || a.severity !== identity.severity) return false;
  if (a.state === 'firing') return true;
  return a.state === 'pending' && (a.pending_since === null || now - a.pending_since < settings.for);
}

/**
 * A breach verdict applied to `t` itself, as {@link step} applies it where {@link breachKeepsStanding} holds (the
 * caller checked, and that the labels are the alert's own): the moving columns and the annotations given. Changes
 * `t` in place: for the engine's own copy of its rows only (src/alerts/tracked-rows.ts). Returns whether any column
 * took a new value (else the row need not be written, as {@link sameReading} spares the repository's save).
 */
export function breachInPlace(
  t: TrackedAlert,
  v: Extract<Verdict, { status: 'breach' | 'ok' }>,
  dataAt: number | null | undefined,
  block: number | null | undefined,
  now: number,
  annotations: Record<string, string>,
): boolean {
  const a = t.alert;
  // The evaluation time moves to `now`: only an alert judged at this instant already (a second reading of its entity
  // in one poll, a second poll at the same clock time) can come out unchanged, so only then is a copy kept to compare.
  const was = a.last_eval_at === now ? { alert: { ...a }, cleared_at: t.cleared_at } : undefined;
  takeBreach(t, v, dataAt, block, now);
  a.annotations = annotations;
  return was === undefined || !sameReading(was, t);
}

/**
 * Whether the columns a judged reading moves are equal (value, threshold, previous value, peak, data time, block,
 * evaluation time, absent polls, annotations, cleared_at), as stored: a non-finite number is stored as NULL.
 * `last_notified_at` is not compared: the dispatcher moves it, and neither write may take it back.
 */
export function sameReading(a: TrackedAlert, b: TrackedAlert): boolean {
  const x = a.alert;
  const y = b.alert;
  return (
    a.cleared_at === b.cleared_at &&
    finite(x.value) === finite(y.value) &&
    finite(x.threshold) === finite(y.threshold) &&
    finite(x.previous_value) === finite(y.previous_value) &&
    finite(x.peak) === finite(y.peak) &&
    x.data_at === y.data_at &&
    x.block === y.block &&
    x.last_eval_at === y.last_eval_at &&
    x.absent_polls === y.absent_polls &&
    sameRecord(x.annotations, y.annotations)
  );
}

/** Whether two maps of texts (labels, annotations) hold the same keys and texts. */
export function sameRecord(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  if (a === b) return true;
  let n = 0;
  for (const k in a) {
    if (a[k] !== b[k]) return false;
    n++;
  }
  for (const _ in b) n--;
  return n === 0;
}

/**
 * What one {@link step} works on: the next alert (its own copy) and `cleared_at` (a {@link TrackedAlert}, so the
 * moves a step shares with {@link breachInPlace} take either), the events so far. The moves below are plain functions
 * of it, not closures made anew by each step (thousands a poll in an incident).
 */
interface Stepping extends TrackedAlert {
  events: AlertEvent[];
  now: number;
  settings: LifecycleSettings;
}

function emit(s: Stepping, type: AlertEvent['type']): void {
  s.events.push({ type, at: s.now, alert: cloneAlert(s.alert) });
}

function moveTo(s: Stepping, state: AlertState): void {
  const a = s.alert;
  a.state = state;
  if (state === 'pending') {
    if (!a.flapping) emit(s, 'pending');
    return;
  }
  if (state === 'inactive') {
    if (!a.flapping) emit(s, 'cancelled');
    return;
  }
  // firing and resolved are the changes that notify, so they are the ones that count towards flapping.
  const since = s.now - s.settings.flap_window;
  a.changes = [...a.changes.filter((t) => t > since), s.now];
  if (!a.flapping && a.changes.length > s.settings.flap_threshold) {
    a.flapping = true;
    emit(s, 'flapping');
    return;
  }
  if (!a.flapping) emit(s, state);
}

function startEpisode(s: Stepping): void {
  s.alert.pending_since = s.now;
  s.alert.firing_since = null;
  s.alert.resolved_at = null;
  s.alert.peak = null;
  s.cleared_at = null;
}

function fire(s: Stepping): void {
  s.alert.firing_since = s.now;
  s.cleared_at = null;
  moveTo(s, 'firing');
}

function resolve(s: Stepping): void {
  s.alert.resolved_at = s.now;
  s.cleared_at = null;
  moveTo(s, 'resolved');
}

function cancel(s: Stepping): void {
  s.cleared_at = null;
  moveTo(s, 'inactive');
}

/** Timers that move without a reading: `for`, keep_firing_for. */
function timers(s: Stepping): void {
  const { alert: a, now, settings } = s;
  if (a.state === 'pending' && a.absent_polls === 0 && a.pending_since !== null && now - a.pending_since >= settings.for) fire(s);
  else if (a.state === 'firing' && s.cleared_at !== null && now - s.cleared_at >= settings.keep_firing_for) resolve(s);
}
