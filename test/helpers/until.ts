/** Polls `check` until it holds; fails after `timeoutMs` (a bound on waiting, not a timing assertion). */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 30_000, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
