"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { openConversationAction } from "@/app/conversations/actions";

export function OpenConversationForm() {
  const router = useRouter();
  const [customer, setCustomer] = useState("");
  const [order, setOrder] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [pending, startTransition] = useTransition();

  function submit() {
    startTransition(async () => {
      setError(null);
      const response = await openConversationAction({ customer_id: customer.trim(), ...(order.trim() ? { order_id: order.trim() } : {}) });
      if (!response.ok) {
        setError(response.message);
        return;
      }
      router.push(`/conversations/${response.data.id}`);
    });
  }

  return (
    <div className="card">
      <input aria-label="customer id" placeholder="customer id, e.g. cu_ana" value={customer} onChange={(event) => setCustomer(event.target.value)} />{" "}
      <input aria-label="order id" placeholder="bound order (optional)" value={order} onChange={(event) => setOrder(event.target.value)} />{" "}
      <button type="button" className="primary" disabled={pending || !customer.trim()} onClick={submit}>
        Open conversation
      </button>
      {error && <p className="error">{error}</p>}
    </div>
  );
}
