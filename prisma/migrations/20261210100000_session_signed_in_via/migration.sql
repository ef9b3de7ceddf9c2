-- How a session's sign-in was proved: a password (the form, or an admin's break-glass) or the tenant's OpenID
-- provider. In a tenant that requires single sign-on, a person's first passkey may be added only from a session
-- the provider signed in a few minutes before (docs/SPEC.md section 7).
ALTER TABLE "Session" ADD COLUMN "signedInVia" TEXT NOT NULL DEFAULT 'password';
ALTER TABLE "Session" ADD CONSTRAINT "Session_signedInVia_check" CHECK ("signedInVia" IN ('password', 'sso'));
