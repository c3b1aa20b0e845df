/** Runs `stop` once on SIGTERM or SIGINT; every long-running command stops this way. */
export function onStopSignal(stop: (signal: string) => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => () => {
    if (stopping) return;
    stopping = true;
    void stop(signal);
  };
  process.once('SIGTERM', handler('SIGTERM'));
  process.once('SIGINT', handler('SIGINT'));
}
