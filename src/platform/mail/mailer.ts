// Outgoing mail, as the services see it: a Mailer sends one message. app.ts picks the kind from the
// configuration: SMTP (smtp.ts) when --smtp-url is set, else the outbox (outbox.ts), a directory in
// the data dir that keeps every message as a file for the operator (`keel admin outbox`).
import MailComposer from 'nodemailer/lib/mail-composer';

export interface Mail {
  /** The From header: a display name (any text: it is encoded, never parsed) and an address. */
  from: { name: string; address: string };
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  /** One line for the operator: where mail goes (start-up log). */
  readonly description: string;
  /** Sends (or keeps) the message; rejects when it could do neither. */
  send(mail: Mail): Promise<void>;
  close(): Promise<void>;
}

/** The message as RFC 5322 bytes (headers encoded as mail needs them), as SMTP carries it and the outbox keeps it. */
export function composeMail(mail: Mail, date: Date): Promise<Buffer> {
  // Line breaks in a header value could start a header of their own: a name or subject is one line.
  const line = (text: string) => text.replace(/[\r\n]+/g, ' ');
  return new MailComposer({
    from: { name: line(mail.from.name), address: mail.from.address },
    to: mail.to,
    subject: line(mail.subject),
    text: mail.text,
    html: mail.html,
    date,
  })
    .compile()
    .build();
}
