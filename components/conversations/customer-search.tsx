"use client";

import { useEffect, useState } from "react";
import { searchCustomersAction } from "@/lib/conversations/actions";
import type { CustomerChoice } from "@/lib/conversations/console";

/**
 * The customer picker's search: the page's first customers for an empty query, else the server's answer 200 ms
 * after typing stops. While a search is on its way the last answer stays (it names the query it answers); null only
 * before any.
 */
export function useCustomerSearch(firstCustomers: CustomerChoice[]) {
  const [query, setQuery] = useState("");
  const [found, setFound] = useState<{ query: string; choices: CustomerChoice[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const shown = query.trim() === "" ? { query: "", choices: firstCustomers } : found;

  useEffect(() => {
    if (query.trim() === "") return;
    let current = true;
    const timer = setTimeout(async () => {
      const response = await searchCustomersAction({ query });
      if (!current) return;
      if (response.ok) setFound({ query, choices: response.data });
      else setError(response.message);
    }, 200);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [query]);

  return { query, setQuery, shown, error, setError };
}

/** The search box over the customer picker's choices (`controls`: the id of the element listing them). */
export function CustomerSearchField({
  label,
  query,
  setQuery,
  controls,
}: {
  label: string;
  query: string;
  setQuery: (query: string) => void;
  controls: string;
}) {
  return (
    <p>
      <label>
        {label}
        <br />
        <input
          type="search"
          className="wide"
          placeholder="email or customer id"
          value={query}
          onChange={(event) => setQuery(event.target.value)}
          aria-controls={controls}
        />
      </label>
    </p>
  );
}
