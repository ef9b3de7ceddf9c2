import Link from "next/link";
import type { HeldReason } from "@/lib/gateway";
import { heldText } from "@/lib/approvals/words";

/** Why a call was held, one reason a line, a possible duplicate linking the earlier call's timeline. */
export function HeldReasons({ reasons, currency }: { reasons: HeldReason[]; currency: string }) {
  return (
    <ul>
      {reasons.map((reason, index) => (
        <li key={`${reason.rule}-${index}`} data-rule={reason.rule}>
          {heldText(reason, currency, { earlierCall: false })}
          {reason.rule === "possible_duplicate" && <EarlierCallLink callId={reason.of_call_id} />}
        </li>
      ))}
    </ul>
  );
}

/** After a possible duplicate's words: " (the earlier call's timeline)", linking the call it matched. */
export function EarlierCallLink({ callId }: { callId: string }) {
  return (
    <>
      {" "}
      (<Link href={`/calls/${callId}`}>the earlier call&apos;s timeline</Link>)
    </>
  );
}
