-- One connection, many customers (issue 40, docs/decisions/022): an OAuth connection carries its person's agent
-- identity, and the person (never the model) chooses the customer it works on. The choice is a conversation of that
-- agent, opened or resumed when the person switches; the connection's calls run in it. Null: no customer chosen yet.

-- AlterTable
ALTER TABLE "OAuthGrant" ADD COLUMN "workingConversationId" TEXT;

-- AddForeignKey
ALTER TABLE "OAuthGrant" ADD CONSTRAINT "OAuthGrant_workingConversationId_fkey" FOREIGN KEY ("workingConversationId") REFERENCES "Conversation"("id") ON DELETE SET NULL ON UPDATE CASCADE;
