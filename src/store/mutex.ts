/** Runs async sections one at a time, in call order (a promise chain that survives failures). */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const r = this.tail.then(fn);
    this.tail = r.catch(() => undefined);
    return r;
  }
}
