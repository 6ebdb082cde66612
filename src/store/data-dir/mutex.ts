/** Runs async sections one at a time, in call order (a promise chain that survives failures). */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  private waiting = 0;

  /** Whether a section is waiting for the one that runs now. */
  get contended(): boolean {
    return this.waiting > 0;
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    this.waiting++;
    const r = this.tail.then(() => {
      this.waiting--;
      return fn();
    });
    this.tail = r.catch(() => undefined);
    return r;
  }
}
