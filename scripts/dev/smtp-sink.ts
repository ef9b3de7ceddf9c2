import { SMTPServer } from "smtp-server";

export interface ReceivedMessage {
  from: string;
  to: string[];
  raw: string;
}

export interface SmtpSink {
  host: string;
  port: number;
  messages: ReceivedMessage[];
  close(): Promise<void>;
}

/** A message's text as a person reads it: quoted-printable's soft line breaks and escapes undone (a long link is whole). */
export function readableText(raw: string): string {
  return raw
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** A local SMTP server that accepts everything and keeps it, so development and tests can count real deliveries. */
export async function startSmtpSink(
  options: { port?: number; host?: string; onMessage?: (message: ReceivedMessage) => void } = {},
): Promise<SmtpSink> {
  const messages: ReceivedMessage[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const message = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((recipient) => recipient.address),
          raw: Buffer.concat(chunks).toString("utf8"),
        };
        messages.push(message);
        options.onMessage?.(message);
        callback();
      });
    },
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const address = server.server.address();
  const port = typeof address === "object" && address ? address.port : (options.port ?? 0);
  return { host, port, messages, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
