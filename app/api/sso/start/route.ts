export { ssoStart as GET } from "@/lib/auth/sso/sign-in/route";
