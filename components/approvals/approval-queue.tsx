"use client";

import Link from "next/link";
import { useCallback, useEffect, useRef, useState, useTransition } from "react";
import { decideApprovalsAction } from "@/lib/approvals/decision/actions";
import type { DeskPolicy } from "@/lib/approvals/desk/cards";
import type { DecisionResult } from "@/lib/approvals/decision/types";
import { requestPhrase } from "@/lib/approvals/words";
import { ApprovalCard } from "./approval-card";
import { amountOf, currencyOf, movesMoney, type CardItem } from "./card-item";
import { DecideDialog } from "./decide-dialog";
import { useNow } from "@/components/ui/time-ago";
import type { StepUpWay } from "@/lib/auth/step-up/step-up";
import { BusyButton } from "@/components/ui/busy-button";

interface Toast {
  id: number;
  text: string;
  ok: boolean;
}

function toastText(result: DecisionResult, item: CardItem | undefined): string {
  const what = item
    ? requestPhrase({
        toolName: item.toolName,
        orderId: item.orderId,
        amountCents: amountOf(item),
        currency: currencyOf(item),
      })
    : "request";
  // Approved, then stopped: the request is closed (History says "stopped by re-check"), not left undecided.
  if (!result.ok && result.code === "approval.recheck-failed")
    return `${what} stopped by its re-check: ${result.message}`;
  if (!result.ok) return `${what} not decided: ${result.message}`;
  if (result.status === "partial") return `${what}: your approval is recorded; a second supervisor must approve`;
  if (result.status === "denied") return `${what} denied`;
  const approved = result.outcome.decision?.approved_arguments;
  if (item && approved && typeof approved.amount_cents === "number") {
    return `${requestPhrase({ toolName: item.toolName, orderId: item.orderId, amountCents: approved.amount_cents, currency: currencyOf(item) })} approved (lowered)`;
  }
  return `${what} approved`;
}

/** Moves keyboard focus to a request's card (each card's element id is `request-<id>`). */
const focusRequest = (id: string | undefined) => document.getElementById(`request-${id}`)?.focus();

const HELP: [string, string][] = [
  ["j / k", "next / previous request"],
  ["a", "approve the focused request"],
  ["d", "deny the focused request"],
  ["x", "select or unselect it"],
  ["?", "show or hide this help"],
];

export function ApprovalQueue({
  items,
  policy,
  me,
  stepUp,
  filtered,
}: {
  items: CardItem[];
  policy: DeskPolicy;
  me: string;
  stepUp: StepUpWay;
  /** Whether the address narrows the queue, so an empty page says so instead of "no pending requests". */
  filtered: boolean;
}) {
  const now = useNow();
  const [focus, setFocus] = useState(0);
  const [selected, setSelected] = useState<string[]>([]);
  const [dialog, setDialog] = useState<{ mode: "approve" | "deny"; ids: string[] } | null>(null);
  const [toasts, setToasts] = useState<Toast[]>([]);
  const [help, setHelp] = useState(false);
  const [pending, startTransition] = useTransition();
  const nextToast = useRef(1);
  // What had focus when the dialog opened (a card's Approve button, or the card itself for the keys): it gets it back.
  const opener = useRef<HTMLElement | null>(null);
  const known = useRef(new Map<string, CardItem>());
  // Where keyboard focus goes once decided requests leave the queue: the request that took the first one's place.
  const refocus = useRef<{ index: number; gone: string[] } | null>(null);
  // Requests seen on this page, so a toast can still name one after it left the queue.
  useEffect(() => {
    for (const item of items) known.current.set(item.id, item);
  }, [items]);

  const visible = items;
  const expired = useCallback((item: CardItem) => now !== null && new Date(item.expiresAt).getTime() <= now, [now]);
  const live = selected.filter((id) => items.some((item) => item.id === id && !expired(item)));

  // The decision's action revalidates the desk, so its answer brings the fresh cards: no refresh of our own.
  const showResults = useCallback(
    (results: DecisionResult[]) => {
      const gone = results.filter((result) => result.ok).map((result) => result.approvalId);
      const first = items.findIndex((item) => gone.includes(item.id));
      refocus.current = gone.length > 0 ? { index: Math.max(0, first), gone } : null;
      // Nothing left the queue (every decision refused): focus stays on the request the dialog was about.
      if (gone.length === 0) requestAnimationFrame(() => focusRequest(results[0]?.approvalId));
      const added = results.map((result) => ({
        id: nextToast.current++,
        ok: result.ok,
        text: toastText(result, known.current.get(result.approvalId)),
      }));
      setToasts((current) => [...current, ...added].slice(-5));
      for (const toast of added)
        setTimeout(() => setToasts((current) => current.filter((other) => other.id !== toast.id)), 8000);
      setSelected([]);
      setDialog(null);
    },
    [items],
  );

  // After a decision the page's focus would fall to the top of the page with the card it was in; it goes on to the
  // next request instead (or to the queue's words when none is left), once the decided ones have left the queue.
  useEffect(() => {
    const next = refocus.current;
    if (!next || dialog || items.some((item) => next.gone.includes(item.id))) return;
    refocus.current = null;
    const index = Math.min(next.index, items.length - 1);
    setFocus(Math.max(0, index));
    if (index >= 0) focusRequest(items[index]!.id);
    else document.getElementById("queue-empty")?.focus();
  }, [items, dialog]);

  const open = useCallback(
    (mode: "approve" | "deny", ids: string[]) => {
      // While a one-click approval is in flight, neither a button nor a shortcut decides again.
      if (pending) return;
      const chosen = ids
        .map((id) => items.find((item) => item.id === id))
        .filter((item): item is CardItem => item !== undefined);
      if (chosen.length === 0) return;
      // Money always gets the dialog; an approval that moves none is one click, with its result as a toast.
      if (mode === "approve" && !chosen.some(movesMoney)) {
        startTransition(async () => {
          const response = await decideApprovalsAction({ decision: "approve", ids });
          if (response.ok) showResults(response.data);
          else setToasts((current) => [...current, { id: nextToast.current++, ok: false, text: response.message }]);
        });
        return;
      }
      opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      setDialog({ mode, ids });
    },
    [items, pending, showResults],
  );

  const toggle = useCallback(
    (id: string) =>
      setSelected((current) => (current.includes(id) ? current.filter((other) => other !== id) : [...current, id])),
    [],
  );

  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      if (dialog || event.metaKey || event.ctrlKey || event.altKey) return;
      const target = event.target as HTMLElement;
      if (target.closest("input, textarea, select, dialog")) return;
      const current = visible[focus];
      const move = (to: number) => {
        const index = Math.max(0, Math.min(visible.length - 1, to));
        setFocus(index);
        focusRequest(visible[index]?.id);
      };
      if (event.key === "j") move(focus + 1);
      else if (event.key === "k") move(focus - 1);
      else if (event.key === "?") setHelp((shown) => !shown);
      else if (event.key === "Escape") setHelp(false);
      else if (!current || expired(current)) return;
      else if (event.key === "a") open("approve", [current.id]);
      else if (event.key === "d") open("deny", [current.id]);
      else if (event.key === "x") toggle(current.id);
      else return;
      event.preventDefault();
    }
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [dialog, focus, open, toggle, visible, expired]);

  return (
    <div>
      <div className="toasts" role="status" aria-live="polite" data-testid="toasts">
        {toasts.map((toast) => (
          <p key={toast.id} className={`toast${toast.ok ? "" : " bad"}`} data-testid="toast">
            {toast.text}
          </p>
        ))}
      </div>
      {help && (
        <div className="card" data-testid="keyboard-help" role="region" aria-label="Keyboard shortcuts">
          <strong>Keyboard</strong>
          <dl className="keys">
            {HELP.map(([key, what]) => (
              <div key={key}>
                <dt>
                  <kbd>{key}</kbd>
                </dt>
                <dd>{what}</dd>
              </div>
            ))}
          </dl>
        </div>
      )}
      {visible.length === 0 ? (
        <p className="muted" data-testid="queue-empty" id="queue-empty" tabIndex={-1}>
          {filtered ? (
            <>
              No pending request matches these filters. <Link href="/approvals">Clear filters</Link> to see every
              request.
            </>
          ) : (
            "No pending requests. Calls the policy holds for a supervisor appear here as they arrive."
          )}
        </p>
      ) : (
        <p className={live.length > 0 ? "bulk selecting" : "bulk"} data-testid="bulk-bar">
          <BusyButton type="button" busy={pending} disabled={live.length === 0} onClick={() => open("approve", live)}>
            Approve selected ({live.length})
          </BusyButton>{" "}
          <BusyButton
            type="button"
            className="danger"
            busy={pending}
            disabled={live.length === 0}
            onClick={() => open("deny", live)}
          >
            Deny selected ({live.length})
          </BusyButton>{" "}
          <button
            type="button"
            className="link keyboard-only"
            onClick={() => setHelp((shown) => !shown)}
            aria-expanded={help}
          >
            Keyboard: ?
          </button>
        </p>
      )}
      {visible.map((item, index) => (
        <ApprovalCard
          key={item.id}
          item={item}
          policy={policy}
          way={stepUp}
          me={me}
          now={now}
          focused={index === focus}
          selected={selected.includes(item.id)}
          busy={pending || dialog !== null}
          onFocus={() => setFocus(index)}
          onToggle={() => toggle(item.id)}
          onApprove={() => open("approve", [item.id])}
          onDeny={() => open("deny", [item.id])}
        />
      ))}
      {dialog && (
        <DecideDialog
          mode={dialog.mode}
          items={dialog.ids
            .map((id) => items.find((item) => item.id === id))
            .filter((item): item is CardItem => item !== undefined)}
          policy={policy}
          way={stepUp}
          onDone={showResults}
          onClose={() => {
            // Focus goes back to what opened the dialog in the request's card (its button, or the card for the keys),
            // else to the card, never to the page's top.
            const about = dialog.ids[0];
            const back = opener.current;
            setDialog(null);
            requestAnimationFrame(() =>
              back?.isConnected && back.closest(`#request-${about}`) ? back.focus() : focusRequest(about),
            );
          }}
        />
      )}
    </div>
  );
}
