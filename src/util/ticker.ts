/**
 * A pass that runs every `intervalMs`, one at a time: a tick while a pass
 * runs joins it. A failed pass is logged by `onError` and the next tick tries
 * again. Used by the flusher, the notification dispatcher, the monitors' clock and the uptime probes.
 */
export function makeTicker(pass: () => Promise<void>, onError: (err: Error) => void, intervalMs: number) {
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  const tick = (): Promise<void> => {
    if (running) return running;
    running = pass()
      .catch(onError)
      .finally(() => {
        running = null;
      });
    return running;
  };
  return {
    tick,
    start() {
      timer = setInterval(() => void tick(), intervalMs);
      timer.unref();
    },
    /** Stops the timer and waits for a running pass. */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
