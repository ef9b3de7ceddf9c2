export { ssoCallback as GET } from "@/lib/auth/sso/route";
