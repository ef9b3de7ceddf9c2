export { ssoStart as GET } from "@/lib/auth/sso/route";
