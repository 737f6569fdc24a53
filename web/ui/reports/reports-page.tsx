// The reports as pictures (capacity, trends, availability).
export function ReportsPage() {
  return (
    <main id="main" class="reports">
      <h1 tabIndex={-1}>Reports</h1>
    </main>
  );
}
