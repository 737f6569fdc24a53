// The reports as pictures: capacity per group, trends over a period, availability per group
// with an outage strip per node.
import { AvailabilitySection } from "./availability-section";
import { CapacitySection } from "./capacity-section";
import { TrendsSection } from "./trends-section";

export function ReportsPage() {
  return (
    <main id="main" class="reports">
      <h1 tabIndex={-1}>Reports</h1>
      <CapacitySection />
      <TrendsSection />
      <AvailabilitySection />
    </main>
  );
}
