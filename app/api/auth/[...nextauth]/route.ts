import { authGet, authPost } from "@/lib/auth/sign-in/route";

export { authGet as GET, authPost as POST };
