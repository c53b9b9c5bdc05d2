/**
 * A large response that waits for its socket (issue 14, B5): /metrics is 12 MB at SPEC §8 scale, and the socket takes
 * a few MB per event-loop turn. While such a response is not yet handed to the socket, long work gives a turn every
 * {@link DRAIN_SLICE_MS} instead of every {@link SLICE_MS}; once the last byte went (or the client left), slices are
 * long again. Real loopback sockets; the reader is paused and resumed to hold the response in between.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { sendChunks } from '../src/http/respond.js';
import { DRAIN_MAX_MS, DRAIN_SLICE_MS, outputWaiting, runYielding, SLICE_MS, sliceNow, type Steps } from '../src/yielding.js';
import { until } from '../src/bench/until.js';

const BODY = Array.from({ length: 8 }, () => Buffer.alloc(1 << 20, 0x61)); // 8 MB, far more than a socket takes at once

let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function serve(): Promise<number> {
  server = createServer((_req, res) => sendChunks(res, 200, 'text/plain', BODY));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A raw client that sends a GET and reads nothing until told to. */
async function pausedClient(port: number): Promise<{ socket: Socket; readAll: () => Promise<number> }> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.pause();
  socket.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
  const readAll = () =>
    new Promise<number>((resolve) => {
      let n = 0;
      socket.on('data', (c: Buffer) => (n += c.length));
      socket.once('end', () => resolve(n));
      socket.resume();
    });
  return { socket, readAll };
}

it('shortens slices while a large response waits for its socket, and lengthens them again once it has gone out', async () => {
  expect(sliceNow(SLICE_MS)).toBe(SLICE_MS);
  const { readAll } = await pausedClient(await serve());
  await until('the held response to shorten slices', () => (sliceNow(SLICE_MS) === DRAIN_SLICE_MS ? true : undefined), 10_000, 10);
  const bytes = await readAll();
  expect(bytes).toBeGreaterThan(8 << 20); // headers and the whole body
  await until('slices to be long again after the last byte', () => (sliceNow(SLICE_MS) === SLICE_MS ? true : undefined), 10_000, 10);
});

it('lengthens slices again when the client leaves before the end', async () => {
  const { socket } = await pausedClient(await serve());
  await until('the held response to shorten slices', () => (sliceNow(SLICE_MS) === DRAIN_SLICE_MS ? true : undefined), 10_000, 10);
  socket.destroy();
  await until('slices to be long again after the client left', () => (sliceNow(SLICE_MS) === SLICE_MS ? true : undefined), 10_000, 10);
});

it('a client that reads slowly gets long slices back while its response still waits (outputWaiting lapses after DRAIN_MAX_MS), not after its whole transfer', async () => {
  const { readAll } = await pausedClient(await serve());
  await until('the held response to shorten slices', () => (sliceNow(SLICE_MS) === DRAIN_SLICE_MS ? true : undefined), 10_000, 10);
  await until('slices to be long again while the response still waits', () => (sliceNow(SLICE_MS) === SLICE_MS ? true : undefined), 10 * DRAIN_MAX_MS, 10);
  expect(await readAll(), 'the response still goes out whole').toBeGreaterThan(8 << 20);
});

it('a mark released twice counts once; a slice asked shorter than the drain slice stays as asked', () => {
  const a = outputWaiting();
  const b = outputWaiting();
  a();
  a();
  expect(sliceNow(SLICE_MS), 'b still waits').toBe(DRAIN_SLICE_MS);
  expect(sliceNow(0)).toBe(0);
  b();
  expect(sliceNow(SLICE_MS)).toBe(SLICE_MS);
});

it('runYielding gives a turn after every step of a drain slice or more while output waits', async () => {
  // Each step holds the loop for at least 1.2 drain slices, so each one ends a slice: a turn between every two steps.
  // (Without the waiting output, slices would be SLICE_MS: several such steps to a turn.)
  const STEPS = 12;
  let turned = false;
  let turns = 0;
  let stop = false;
  const tick = () => {
    turned = true;
    if (!stop) setImmediate(tick);
  };
  function* steps(): Steps<void> {
    for (let i = 0; i < STEPS; i++) {
      if (turned) turns++;
      turned = false;
      const t0 = performance.now();
      while (performance.now() - t0 < 1.2 * DRAIN_SLICE_MS);
      yield;
    }
  }
  const done = outputWaiting();
  try {
    setImmediate(tick);
    await runYielding(steps());
  } finally {
    stop = true;
    done();
  }
  expect(turns).toBeGreaterThanOrEqual(STEPS - 2);
});
