/**
 * Runs `stop` once on SIGTERM or SIGINT; every long-running command stops
 * this way. The returned function stops for another reason (once too).
 */
export function onStopSignal(stop: (signal: string) => Promise<void>): (reason: string) => void {
  let stopping = false;
  const handler = (signal: string) => () => {
    if (stopping) return;
    stopping = true;
    void stop(signal);
  };
  // Kept after the first signal: a second Ctrl-C must not kill the process half-way and orphan its children.
  process.on('SIGTERM', handler('SIGTERM'));
  process.on('SIGINT', handler('SIGINT'));
  return (reason) => handler(reason)();
}
