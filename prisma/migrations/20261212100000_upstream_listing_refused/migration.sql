-- Why toolgate refused the server's last listing of its tools (too many, a name listed twice, a definition too
-- large), kept for the admin page until a listing is taken; null when the last one was.
ALTER TABLE "UpstreamServer" ADD COLUMN "listingRefused" TEXT;
