import Link from "next/link";

export default function NotFound() {
  return (
    <main>
      <h1>Nothing here</h1>
      <p>
        There is no page at this address, or it belongs to another tenant. Check the link you followed; approvals, calls
        and conversations are only shown to people of the tenant they belong to.
      </p>
      <p>
        <Link href="/">Go to your workspace</Link>
      </p>
    </main>
  );
}
