/** axe-core in a Chromium page (playwright-core): the dashboard's pages must show no serious or critical violation. */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core on the page as shown: no serious or critical violation (`name` says which page failed). */
export async function accessible(name: string, on: Page): Promise<void> {
  await on.evaluate(AXE_SOURCE);
  const violations = await on.evaluate(async () => {
    const result = await (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> } }).axe.run();
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) }));
  });
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad, `${name}: ${JSON.stringify(bad, null, 2)}`).toEqual([]);
}
