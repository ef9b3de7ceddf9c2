-- A password change is its own event, so that re-hashing a password at sign-in does not end sessions.
ALTER TABLE "User" ADD COLUMN "passwordChangedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- CreateTable
CREATE TABLE "Session" (
    "id" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "endedAt" TIMESTAMPTZ(3),
    "endedReason" TEXT,
    "address" TEXT,
    "userAgent" TEXT,

    CONSTRAINT "Session_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Session_userId_endedAt_idx" ON "Session"("userId", "endedAt");

-- AddForeignKey
ALTER TABLE "Session" ADD CONSTRAINT "Session_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- CreateTable
CREATE TABLE "SignInThrottle" (
    "key" TEXT NOT NULL,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "lockedUntil" TIMESTAMPTZ(3),
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SignInThrottle_pkey" PRIMARY KEY ("key")
);

-- Deactivating a person, changing their role or their password ends their sessions, whatever path made the change.
CREATE FUNCTION "user_change_ends_sessions"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "Session" SET "endedAt" = CURRENT_TIMESTAMP,
        "endedReason" = CASE
            WHEN NEW."active" IS DISTINCT FROM OLD."active" THEN 'deactivated'
            WHEN NEW."role" IS DISTINCT FROM OLD."role" THEN 'role-changed'
            ELSE 'password-changed' END
    WHERE "userId" = NEW."id" AND "endedAt" IS NULL;
    RETURN NEW;
END $$;

CREATE TRIGGER "User_change_ends_sessions"
    AFTER UPDATE OF "active", "role", "passwordChangedAt" ON "User"
    FOR EACH ROW
    WHEN (NEW."active" IS DISTINCT FROM OLD."active" OR NEW."role" IS DISTINCT FROM OLD."role" OR NEW."passwordChangedAt" IS DISTINCT FROM OLD."passwordChangedAt")
    EXECUTE FUNCTION "user_change_ends_sessions"();
