/** REST handlers for key administration and bans. */
import type { NewKey } from '../../service/keys.js';
import type { Services } from '../../service/services.js';
import { pageRequest } from '../paging-params.js';
import { created, noContent, paged } from '../respond.js';
import type { Handlers } from '../state.js';
import { actor } from './actor.js';

export function adminHandlers(s: Services): Handlers {
  return {
    async createKey(ctx, req) {
      const { key, secret } = await s.keys.create(actor(ctx), req.body as NewKey);
      created(ctx, { ...key, key: secret }, `/admin/keys/${key.id}`);
      // Secrets are never stored, so an idempotent replay answers without one.
      ctx.state.replayBody = key;
    },
    async listKeys(ctx, req) {
      paged(ctx, await s.keys.list(actor(ctx), pageRequest(req)));
    },
    async revokeKey(ctx, req) {
      await s.keys.revoke(actor(ctx), req.params.keyId!);
      noContent(ctx);
    },
    async liftBan(ctx, req) {
      await s.bans.lift(actor(ctx), req.params.keyId!);
      noContent(ctx);
    },
  };
}
