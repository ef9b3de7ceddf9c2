-- A connection a change to its person ends (deactivation, a new role, a password change, the refund permission
-- withdrawn) is audited as one a person or an admin revokes is: an "oauth.revoked" row in the tenant's audit log with
-- the grant, its agent and client and the reason, whatever path made the change. The trigger cannot know who made
-- it; that change's own audit row, in the same transaction (txid), names them.

CREATE OR REPLACE FUNCTION "user_change_ends_connections"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    reason TEXT := CASE
        WHEN NEW."active" IS DISTINCT FROM OLD."active" THEN 'deactivated'
        WHEN NEW."role" IS DISTINCT FROM OLD."role" THEN 'role-changed'
        WHEN NEW."passwordChangedAt" IS DISTINCT FROM OLD."passwordChangedAt" THEN 'password-changed'
        ELSE 'refunds-withdrawn' END;
BEGIN
    WITH ended AS (
        UPDATE "OAuthGrant" SET "revokedAt" = CURRENT_TIMESTAMP, "revokedReason" = reason
        WHERE "agentId" = NEW."id" AND "revokedAt" IS NULL
          AND (reason <> 'refunds-withdrawn' OR 'refunds:write' = ANY ("scopes"))
        RETURNING "id", "tenantId", "agentId", "clientId", "apiKeyId"),
    keys AS (
        UPDATE "ApiKey" SET "revokedAt" = CURRENT_TIMESTAMP
        WHERE "id" IN (SELECT "apiKeyId" FROM ended) AND "revokedAt" IS NULL)
    INSERT INTO "AuditLog" ("tenantId", "actorId", "action", "detail")
    SELECT "tenantId", '(change to the person)', 'oauth.revoked',
           jsonb_build_object('grantId', "id", 'agentId', "agentId", 'clientId', "clientId", 'reason', reason)
    FROM ended ORDER BY "id";
    RETURN NEW;
END $$;
