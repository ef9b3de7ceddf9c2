import { authGet, authPost } from "@/lib/auth/route";

export { authGet as GET, authPost as POST };
