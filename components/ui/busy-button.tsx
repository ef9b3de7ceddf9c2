"use client";

import type { ComponentProps } from "react";

/**
 * A button that keeps keyboard focus while its action runs. `disabled` would drop focus to the page's body, so a
 * keyboard user who pressed it starts again from the top; a busy button is `aria-disabled` instead and ignores
 * presses (a submit's too, Enter in a field included). `disabled` stays for a button that cannot be used at all.
 */
export function BusyButton({ busy, onClick, ...props }: ComponentProps<"button"> & { busy: boolean }) {
  return (
    <button
      {...props}
      aria-disabled={busy || undefined}
      onClick={(event) => {
        if (busy) event.preventDefault();
        else onClick?.(event);
      }}
    />
  );
}
