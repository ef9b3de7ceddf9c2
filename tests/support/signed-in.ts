import type { SessionUser } from "@/lib/auth/sign-in/auth";

/**
 * Who the mocked `@/lib/auth/sign-in/auth` says is signed in, and through which session (a step-up proof counts only from
 * the session that made it). A test file mocks the module with `signedInMock` and sets these.
 */
export const signedIn = { user: null as SessionUser | null, sessionId: "ses_none" };

export const signedInMock = () => ({
  currentUser: async () => signedIn.user,
  currentSession: async () => (signedIn.user ? { user: signedIn.user, sessionId: signedIn.sessionId } : null),
});
