import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory/memory-store.js';
import { FakeClock } from '../../test/support/fixtures.js';
import { createServices } from './services.js';
import { UnauthenticatedError } from './errors.js';
import { hashSecret } from './secrets.js';
import { STREAM_TOKEN_TTL_MS } from './stream-tokens.js';
import type { Principal } from './records.js';

const ADMIN: Principal = { keyId: 0, role: 'admin', plan: 'enterprise', perMinute: 10_000, perDay: 10_000_000 };

async function setup() {
  const clock = new FakeClock();
  const store = new MemoryStore();
  const s = createServices({ store, clock, adminSecret: 'psk_enterprise_TestAdminKey000000000000000000', bans: { banSeconds: 900 } });
  const { key } = await s.keys.create(ADMIN, { name: 'shop', role: 'customer', plan: 'pro' });
  const actor: Principal = { keyId: key.id, role: key.role, plan: key.plan, perMinute: key.perMinute, perDay: key.perDay };
  return { clock, store, s, actor };
}

describe('StreamTokenService', () => {
  it('redeems a token once, for its key, and keeps only its hash', async () => {
    const { store, s, actor } = await setup();
    const { token, expiresAt } = await s.streamTokens.issue(actor);
    expect(token).toMatch(/^pst_[0-9A-Za-z]{40}$/);
    expect(JSON.stringify(store.dump())).not.toContain(token);
    expect(await store.getIdempotency(`stream-token:${hashSecret(token)}`)).toBeDefined();
    expect(Date.parse(expiresAt)).toBeGreaterThan(0);
    expect(await s.streamTokens.redeem(token)).toEqual(actor);
    await expect(s.streamTokens.redeem(token)).rejects.toBeInstanceOf(UnauthenticatedError);
  });

  it('lets exactly one of two redemptions at the same moment through', async () => {
    const { s, actor } = await setup();
    const { token } = await s.streamTokens.issue(actor);
    const outcomes = await Promise.allSettled([s.streamTokens.redeem(token), s.streamTokens.redeem(token)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
  });

  it('refuses a token past its 60 seconds, one whose key was revoked, and anything else', async () => {
    const { clock, s, actor } = await setup();
    const late = (await s.streamTokens.issue(actor)).token;
    clock.advance(STREAM_TOKEN_TTL_MS);
    await expect(s.streamTokens.redeem(late)).rejects.toBeInstanceOf(UnauthenticatedError);

    const orphan = (await s.streamTokens.issue(actor)).token;
    await s.keys.revoke(ADMIN, actor.keyId);
    await expect(s.streamTokens.redeem(orphan)).rejects.toBeInstanceOf(UnauthenticatedError);

    for (const bad of ['', 'pst_', 'psk_pro_whatever', `pst_${'x'.repeat(40)}`]) await expect(s.streamTokens.redeem(bad)).rejects.toBeInstanceOf(UnauthenticatedError);
  });
});
