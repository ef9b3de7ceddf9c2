import type { Defect } from "./defect";

/** The seeded defects of lib/security/. */
export const defects: Defect[] = [
  {
    name: "metrics token",
    file: "lib/security/operator.ts",
    find: 'return sameSecret(request.headers.get("authorization") ?? "", `Bearer ${token}`);',
    replace: "return true;",
    testFile: "tests/ops/metrics.integration.test.ts",
    test: "wants the bearer token when METRICS_TOKEN is set",
  },
  {
    name: "metrics loopback only",
    file: "lib/security/operator.ts",
    find: 'if (!token) return NODE_ENV !== "production" && LOOPBACK.test(clientAddress(request.headers));',
    replace: "if (!token) return true;",
    testFile: "tests/ops/metrics.integration.test.ts",
    test: "outside production without METRICS_TOKEN answers loopback only",
  },
  {
    name: "outbound resolved check",
    file: "lib/security/outbound.ts",
    find: "for (const answer of answers) refuseUnlessAllowed(answer.address, host, allowed);",
    replace: "",
    testFile: "tests/security/outbound.integration.test.ts",
    test: "refuses a send whose name now resolves to loopback (DNS rebinding) and records why, reaching nothing",
  },
  {
    name: "outbound literal check",
    file: "lib/security/outbound.ts",
    find: "if (isIP(hostAddress)) await resolveChecked(url);",
    replace: "",
    testFile: "tests/security/outbound.integration.test.ts",
    test: "refuses a send to a loopback address written straight into the database, past the save check",
  },
  {
    name: "outbound metadata",
    file: "lib/security/outbound.ts",
    find: 'if (kind === "public" || (kind === "internal" && allowed)) return;',
    replace: 'if (kind === "public" || allowed) return;',
    testFile: "tests/security/outbound.integration.test.ts",
    test: "lets the operator allow a listed host, but never a metadata address, and says so when a name does not resolve",
  },
  {
    name: "outbound translated ipv6",
    file: "lib/security/outbound.ts",
    find: "if (address instanceof ipaddr.IPv6 && within(address, TRANSLATED))",
    replace: "if (false)",
    testFile: "tests/security/outbound.integration.test.ts",
    test: "refuses IPv6 forms that reach IPv4 (compatible, SIIT, 6to4, Teredo, NAT64, site-local), as literals and as DNS answers, for webhooks and metadata documents",
  },
  {
    name: "outbound transition ipv6",
    file: "lib/security/outbound.ts",
    find: "if (within(address, TRANSITION))",
    replace: "if (false)",
    testFile: "tests/security/outbound.integration.test.ts",
    test: "refuses IPv6 forms that reach IPv4 (compatible, SIIT, 6to4, Teredo, NAT64, site-local), as literals and as DNS answers, for webhooks and metadata documents",
  },
  {
    name: "webhook plain http",
    file: "lib/security/outbound.ts",
    find: 'if (signed && url.protocol === "http:" && env().NODE_ENV === "production")',
    replace: "if (false)",
    testFile: "tests/security/outbound.integration.test.ts",
    test: "refuses a plain http webhook in production, when saved and again when sent, and keeps https",
  },
];
