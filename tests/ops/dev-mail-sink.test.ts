import { afterEach, describe, expect, it, vi } from "vitest";
import nodemailer from "nodemailer";
import { startLocalExternals } from "@/scripts/dev/external-services";

// What `npm run dev` prints for each mail its local sink takes: the subject as the person reads it, and the links.

const saved = { PAYMENT_PROVIDER_URL: process.env.PAYMENT_PROVIDER_URL, SMTP_HOST: process.env.SMTP_HOST };

afterEach(() => {
  for (const [name, value] of Object.entries(saved))
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  vi.restoreAllMocks();
});

describe("the development mail sink", () => {
  it("prints a folded, encoded subject as its words, and the approval link whole", async () => {
    process.env.PAYMENT_PROVIDER_URL = "http://127.0.0.1:1";
    delete process.env.SMTP_HOST;
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => void lines.push(String(line)));
    const externals = await startLocalExternals({ logMail: true });
    try {
      const subject =
        "Change waiting: Held calls in chat: Slack → #approvals — über, with a subject long enough to fold";
      const link = `http://127.0.0.1:3000/approvals/r/${"a".repeat(60)}`;
      await nodemailer
        .createTransport({ host: externals.env.SMTP_HOST, port: Number(externals.env.SMTP_PORT), secure: false })
        .sendMail({ from: "toolgate@acme.test", to: "admin@acme.test", subject, text: `Open it: ${link}` });
      await vi.waitFor(() => expect(lines).toHaveLength(1));
      expect(lines[0]).toBe(`[mail sink] to admin@acme.test: ${subject}\n  open: ${link}`);
    } finally {
      await externals.close();
    }
  });
});
