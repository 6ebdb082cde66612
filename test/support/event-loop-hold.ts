/**
 * The longest the event loop was held while `work` ran, seen by a 2 ms interval timer: for tests
 * of work that must give the loop back (counts over large tables, background builds).
 */
export async function longestHold<T>(work: () => Promise<T>): Promise<{ result: T; longestMs: number }> {
  let longestMs = 0;
  let last = performance.now();
  const poller = setInterval(() => {
    const now = performance.now();
    longestMs = Math.max(longestMs, now - last);
    last = now;
  }, 2);
  try {
    return { result: await work(), longestMs };
  } finally {
    clearInterval(poller);
  }
}
