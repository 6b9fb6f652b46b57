// Mail through an SMTP server (--smtp-url: smtp://user:pass@host:port or smtps://...), by nodemailer.
// A message the server does not take is kept in the outbox instead, and the failure logged: an
// invitation already committed is not lost to a mail server being down.
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from '../log.js';
import type { Clock } from '../clock.js';
import { composeMail, type Mail, type Mailer } from './mailer.js';
import type { OutboxMailer } from './outbox.js';

/** How long a connection, the server's greeting and a quiet socket may take before the send fails. */
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

export class SmtpMailer implements Mailer {
  readonly description: string;
  private readonly transport: Transporter;
  private readonly fallback: OutboxMailer;
  private readonly log: Logger;
  private readonly clock: Clock;

  constructor(url: string, fallback: OutboxMailer, log: Logger, clock: Clock) {
    const u = new URL(url);
    this.transport = nodemailer.createTransport({ url, ...TIMEOUTS });
    this.fallback = fallback;
    this.log = log;
    this.clock = clock;
    // The password stays out of the log.
    this.description = `mail is sent through ${u.protocol}//${u.host} (kept in ${fallback.dir} when the server refuses it)`;
  }

  async send(mail: Mail): Promise<void> {
    const envelope = { from: mail.from.address, to: [mail.to] };
    try {
      await this.transport.sendMail({ envelope, raw: await composeMail(mail, new Date(this.clock.now())) });
    } catch (err) {
      const file = await this.fallback.keep(mail);
      this.log.error('mail not sent; kept in the outbox', { to: mail.to, file, error: (err as Error).message });
    }
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}
