"use client";

import { useRouter } from "next/navigation";
import { useId, useState, useTransition } from "react";
import { FormMessages } from "@/components/ui/field";
import { CustomerSearchField, useCustomerSearch } from "./customer-search";
import { openConversationAction } from "@/lib/conversations/actions";
import type { CustomerChoice } from "@/lib/conversations/console";
import { formatMoney } from "@/lib/money";
import { BusyButton } from "@/components/ui/busy-button";
import { count } from "@/lib/words";

/**
 * Find a customer by email (or id), pick one, optionally bind one of their orders, open the conversation. The page
 * renders the first customers (an empty search); typing asks the server for more.
 */
export function OpenConversationForm({ firstCustomers }: { firstCustomers: CustomerChoice[] }) {
  const router = useRouter();
  const id = useId();
  const { query, setQuery, shown, error, setError } = useCustomerSearch(firstCustomers);
  const choices = shown?.choices ?? null;
  const [customer, setCustomer] = useState<CustomerChoice | null>(null);
  const [order, setOrder] = useState("");
  const [pending, startTransition] = useTransition();

  function submit() {
    if (!customer) return;
    startTransition(async () => {
      setError(null);
      const response = await openConversationAction({
        customer_id: customer.id,
        ...(order ? { order_id: order } : {}),
      });
      if (!response.ok) {
        setError(response.message);
        return;
      }
      router.push(`/conversations/${response.data.id}`);
    });
  }

  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`} style={{ marginTop: 0 }}>
        Open a conversation
      </h2>
      <CustomerSearchField label="Find a customer" query={query} setQuery={setQuery} controls={`${id}-choices`} />
      <fieldset id={`${id}-choices`} className="choices" aria-live="polite">
        <legend>Customer</legend>
        {choices === null ? (
          <p className="muted">Searching…</p>
        ) : choices.length === 0 ? (
          <p className="muted">No customer matches “{shown?.query}”. Try part of their email.</p>
        ) : (
          choices.map((choice) => (
            <label key={choice.id} className="choice">
              <input
                type="radio"
                name={`${id}-customer`}
                value={choice.id}
                checked={customer?.id === choice.id}
                onChange={() => {
                  setCustomer(choice);
                  setOrder("");
                }}
              />{" "}
              {choice.email} <span className="muted">· {count(choice.orders.length, "order")}</span>
            </label>
          ))
        )}
      </fieldset>
      {customer && (
        <p>
          <label>
            Bind to an order (optional)
            <br />
            <select value={order} onChange={(event) => setOrder(event.target.value)} className="wide">
              <option value="">any of {customer.email}&apos;s orders</option>
              {customer.orders.map((choice) => (
                <option key={choice.id} value={choice.id}>
                  {choice.id}: {choice.status}, {formatMoney(choice.totalCents, choice.currency)}
                </option>
              ))}
            </select>
          </label>
        </p>
      )}
      <div className="actions">
        <BusyButton type="button" className="primary" busy={pending} disabled={!customer} onClick={submit}>
          {customer ? `Open conversation with ${customer.email}` : "Open conversation"}
        </BusyButton>
      </div>
      <FormMessages error={error} />
    </section>
  );
}
