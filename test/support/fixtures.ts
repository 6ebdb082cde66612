/**
 * Fixtures shared by every target (the server in-process and the MSW mocks): the bootstrap admin
 * secret and a clock the test moves by hand. Nothing here loads the server or the mocks.
 */

export const ADMIN_SECRET = 'psk_enterprise_TestAdminSecret0123456789abcdefXYZ';

/** A clock that stands still unless the test moves it. */
export class FakeClock {
  constructor(public t = Date.parse('2026-11-23T12:00:00Z')) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}
