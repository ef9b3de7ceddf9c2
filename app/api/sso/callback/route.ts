export { ssoCallback as GET } from "@/lib/auth/sso/sign-in/route";
