// The gateway's one entrance (docs/ARCHITECTURE.md): what the features above may use. Everything else in
// lib/gateway/ is its inside, and the lint refuses an import of it from outside (eslint/imports-point-down.mjs).

export { proposeToolCall, completeExternal } from "./pipeline";
export type { Proposal, CallResult, GatewayPorts } from "./pipeline";
export type { ConversationFacts, HintedOrder, RateCount, TenantPolicy } from "./types";
export { MAX_DEPTH, MAX_ENVELOPE_BYTES, orderHintOf, parseJsonText, type RawProposal } from "./checks/parse";
export { countConversationOpen, pruneRateBuckets } from "./checks/rate";
export { lockConversation, type LockedFacts } from "./context/lock";
export { heldFor, pruneAutoExposure, type DuplicateVerdict, type HeldReason } from "./decide/policy";
export { recheckForApproval, recheckForResend } from "./decide/recheck";
export { withdrawApproval, expireApproval, type ApprovalPreview } from "./outcome/approval";
export { executeCall } from "./outcome/execute";
export { appendDecision, recordLaterOutcome, recordLaterOutcomeWith } from "./outcome/record";

// For the second kind of tool (lib/upstream/): the stages that apply to an upstream call, and its approval rows.
export { parseEnvelope, type Envelope } from "./checks/parse";
export { countAndLimitCall } from "./checks/rate";
export { deriveCallKey, isCallKey } from "./context/idempotency";
export { publishedRules, verdictStop } from "./decide/rules";
export { pendingOutcome } from "./outcome/approval";
export { newCallRecord, recordCall } from "./outcome/record";
export { UNKNOWN_TOOL } from "../outcome";
export { findPendingApproval, insertApproval } from "./outcome/sql";
export type { CallRecord } from "./types";
