import { randomUUID } from "node:crypto";
import { renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startFakeProvider } from "./fake-provider";
import { readableText, startSmtpSink } from "./smtp-sink";

/**
 * For development and tests: the fake payment provider and a local SMTP sink, unless the environment already
 * names real ones. Returns the environment the app needs to reach them. `mailDir`: a folder the sink writes each
 * message it takes to, one JSON file each, before it accepts it; the browser tests read approval links there, since
 * the outbox keeps none once a mail is sent.
 */
export async function startLocalExternals(
  options: { providerPort?: number; smtpPort?: number; logMail?: boolean; mailDir?: string } = {},
) {
  const env: Record<string, string> = {};
  const closers: (() => Promise<void>)[] = [];
  if (!process.env.PAYMENT_PROVIDER_URL) {
    const provider = await startFakeProvider({ port: options.providerPort });
    env.PAYMENT_PROVIDER_URL = provider.url;
    env.PAYMENT_PROVIDER_SECRET = provider.secret;
    closers.push(provider.close);
  }
  if (!process.env.SMTP_HOST) {
    const sink = await startSmtpSink({
      port: options.smtpPort,
      onMessage: (message) => {
        if (options.logMail) console.log(mailLine(message));
        if (options.mailDir) keepMail(options.mailDir, message);
      },
    });
    env.SMTP_HOST = sink.host;
    env.SMTP_PORT = String(sink.port);
    closers.push(sink.close);
  }
  return { env, close: async () => void (await Promise.all(closers.map((close) => close()))) };
}

/** Writes the message under a name of its own and then renames it, so a reader never meets half a file. */
function keepMail(dir: string, message: { from: string; to: string[]; raw: string }): void {
  const file = path.join(dir, randomUUID());
  writeFileSync(`${file}.part`, JSON.stringify(message));
  renameSync(`${file}.part`, `${file}.json`);
}

/** A header's RFC 2047 encoded words (`=?UTF-8?Q?Change_waiting=3A?=`, `=?UTF-8?B?...?=`) as the text they hold. */
function decodedHeader(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, "?==?")
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_, charset: string, encoding: string, text: string) => {
      const bytes =
        encoding.toUpperCase() === "B"
          ? Buffer.from(text, "base64")
          : Buffer.from(
              text
                .replace(/_/g, " ")
                .replace(/=([0-9A-Fa-f]{2})/g, (__, hex: string) => String.fromCharCode(parseInt(hex, 16))),
              "latin1",
            );
      return new TextDecoder(charset).decode(bytes);
    });
}

/** One line per message for the developer: recipient, subject, and the approval links it carries, to open them. */
function mailLine(message: { to: string[]; raw: string }): string {
  // A long subject is folded over several lines, each going on after whitespace.
  const headers = message.raw.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, " ");
  const subject = decodedHeader(/^Subject: (.*)$/m.exec(headers)?.[1] ?? "");
  const links = [
    ...new Set(readableText(message.raw).match(/https?:\/\/[^\s"<>]+\/approvals\/r\/[A-Za-z0-9_-]+/g) ?? []),
  ];
  return [`[mail sink] to ${message.to.join(", ")}: ${subject}`, ...links.map((link) => `  open: ${link}`)].join("\n");
}
