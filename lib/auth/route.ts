import "server-only";
import NextAuth from "next-auth";
import { errorResponse } from "../api/http";
import { authOptions } from "./auth";

const nextAuth = NextAuth(authOptions) as (request: Request, context: unknown) => Promise<Response>;

export function authGet(request: Request, context: unknown): Promise<Response> {
  return nextAuth(request, context);
}

/** next-auth's own client posts forms; any other body would reach its parser and come back as a 500. */
export function authPost(request: Request, context: unknown): Promise<Response> {
  const type = request.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") {
    return Promise.resolve(errorResponse(415, "request.unsupported-type", "send the form as application/x-www-form-urlencoded"));
  }
  return nextAuth(request, context);
}
