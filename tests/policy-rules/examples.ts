/** The three example rules, in the rule language. */
export const OLD_ORDERS = `@id("old-orders-wait")
@hold("Refunds on orders older than 90 days wait for a supervisor")
forbid (principal, action == Action::"issue_refund", resource)
when { resource.age_days > 90 };`;

export const FIRST_REFUND_NEW_CUSTOMER = `@id("first-refund-new-customer")
@hold("An agent's first refund of the day for a customer newer than 30 days waits for a supervisor")
forbid (principal, action == Action::"issue_refund", resource)
when { principal.refunds_today == 0 && resource.customer.age_days < 30 };`;

export const FRAUD_WATCH = `@id("fraud-watch")
@deny("customer-on-fraud-watch")
forbid (principal, action == Action::"issue_refund", resource)
when { resource.customer.fraud_watch };`;

/** Not one of the issue's: an agent's second refund of the day waits, whatever the customer. */
export const SECOND_REFUND_WAITS = `@id("second-refund-waits")
@hold("An agent's second refund of the day waits for a supervisor")
forbid (principal, action == Action::"issue_refund", resource)
when { principal.refunds_today >= 1 };`;

export const EXAMPLE_RULES = [OLD_ORDERS, FIRST_REFUND_NEW_CUSTOMER, FRAUD_WATCH].join("\n\n");
