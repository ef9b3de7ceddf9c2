export default function HomePage() {
  return (
    <main>
      <h1>toolgate</h1>
      <p>A model only proposes a tool call; toolgate decides, executes what is allowed and records every decision.</p>
    </main>
  );
}
