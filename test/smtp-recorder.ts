/** A real SMTP server (the `smtp-server` package) on loopback that takes one user's password and keeps every message, raw. */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A running recorder: its port, the raw messages received so far, and how to stop it. */
export interface SmtpRecorder {
  port: number;
  mails: Buffer[];
  stop(): Promise<void>;
}

/**
 * Starts a recorder that accepts AUTH as `user` with `password` and refuses anyone else: plain, no TLS (loopback
 * only), or with `secure` TLS from the first byte under smtp-server's own self-signed certificate.
 */
export async function startSmtpRecorder(password: string, user = 'lookout', opts: { secure?: boolean } = {}): Promise<SmtpRecorder> {
  const mails: Buffer[] = [];
  const server = new SMTPServer({
    ...(opts.secure ? { secure: true } : {}),
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _s, cb) {
      cb(auth.username === user && auth.password === password ? null : new Error('bad credentials'), { user: auth.username });
    },
    onData(stream, _s, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push(Buffer.concat(chunks));
        cb();
      });
    },
  });
  // A client that drops the connection (it refused the certificate) is the test's point, not the server's failure.
  server.on('error', () => {});
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.server.address() as AddressInfo).port, mails, stop: () => new Promise<void>((r) => server.close(() => r())) };
}
