/**
 * Long work on the event loop (a count over 1,000,000 records, building the name index) done in
 * slices: between pieces of it, `due` tells when a slice of `ms` is used up and `pause()` gives
 * the event loop back before the next one. setTimeout, so it runs in browsers too (the mocks).
 */
export class TimeSlices {
  private start = Date.now();

  constructor(private readonly ms: number) {}

  get due(): boolean {
    return Date.now() - this.start >= this.ms;
  }

  async pause(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 0));
    this.start = Date.now();
  }
}
