import Link from "next/link";
import { ProblemPage } from "@/components/layout/problem-page";

export const metadata = { title: "Nothing here" };

export default function NotFound() {
  return (
    <ProblemPage title="Nothing here" actions={<Link href="/">Go to your workspace</Link>}>
      <p>
        There is no page at this address, or it belongs to another tenant. Check the link you followed; approvals, calls
        and conversations are only shown to people of the tenant they belong to.
      </p>
    </ProblemPage>
  );
}
