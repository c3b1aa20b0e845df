/**
 * Runs `stop` once on SIGTERM or SIGINT; every long-running command stops
 * this way. The returned function stops for another reason (once too).
 *
 * Once stopping, a MongoDB operation that the closing of the store connection cuts short is expected: every request
 * has been answered and every job finished by then, so what it read or wrote no longer matters to anyone (what was
 * acknowledged was durable before it was). The driver (6.17+) rejects such an operation with
 * `MongoClientClosedError`; one whose promise nobody awaits any more (a read started beside a request a moment
 * before the signal) would end the process with exit code 1. It is logged instead; any other uncaught error
 * or unhandled rejection still ends the process as before.
 */
export function onStopSignal(stop: (signal: string) => Promise<void>): (reason: string) => void {
  let stopping = false;
  const handler = (signal: string) => () => {
    if (stopping) return;
    stopping = true;
    process.on('uncaughtException', (err) => {
      if ((err as Error | null)?.name === 'MongoClientClosedError') {
        process.stderr.write(`lookout: a store operation was cut short by the shutdown (${err.message})\n`);
        return;
      }
      // as Node would without this listener: the error and its stack, and exit code 1
      process.stderr.write(`${(err as Error | null)?.stack ?? String(err)}\n`);
      process.exit(1);
    });
    void stop(signal);
  };
  // Kept after the first signal: a second Ctrl-C must not kill the process half-way and orphan its children.
  process.on('SIGTERM', handler('SIGTERM'));
  process.on('SIGINT', handler('SIGINT'));
  return (reason) => handler(reason)();
}
