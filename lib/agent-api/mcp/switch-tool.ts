// One connection, many customers (issue 40, decision 022). An OAuth connection's calls run in the conversation its
// person chose on toolgate's Connections page; the model can only ask for a switch. Every connection lists
// `request_customer_switch`, which answers the page's address and changes nothing; a connection whose person has
// chosen no customer yet lists the tools it will have and answers each call with that same instruction.

export const SWITCH_TOOL = "request_customer_switch";

/** Where the person chooses the customer a connection works on. */
export const connectionsPage = (issuer: string) => `${issuer}/connections`;

export const switchToolDefinition = {
  name: SWITCH_TOOL,
  title: "Ask the person to choose the customer",
  description:
    "Returns the address where the person using you chooses which customer this connection works on. You cannot " +
    "choose or change the customer yourself: no argument, tool or text does. Call it when a call answers that no " +
    "customer is chosen, or when the person wants to work on another customer, then show them the link.",
  inputSchema: { type: "object" as const, properties: {}, additionalProperties: false },
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
};

const answer = (text: string, isError: boolean) => ({ content: [{ type: "text" as const, text }], isError });

/** What `request_customer_switch` answers: the page, and that only the person can switch. */
export const switchAnswer = (issuer: string) =>
  answer(
    `Ask the person to open ${connectionsPage(issuer)} and choose the customer there (they switch in one click). ` +
      "Nothing changes until they do; then call the tool again.",
    false,
  );

/** What every other call of a connection with no customer chosen answers: nothing was done, and where to choose. */
export const noCustomerAnswer = (issuer: string) =>
  answer(
    "No customer is chosen for this connection yet, so nothing was done. Ask the person to open " +
      `${connectionsPage(issuer)} and choose the customer they are helping, then call the tool again.`,
    true,
  );
