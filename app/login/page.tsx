import { LoginForm } from "@/components/login-form";

export default function LoginPage() {
  return (
    <main>
      <h1>Sign in to toolgate</h1>
      <LoginForm />
    </main>
  );
}
