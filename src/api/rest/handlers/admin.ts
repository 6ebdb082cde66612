/** REST handlers for key administration and bans. */
import type { NewKey } from '../../../service/keys.js';
import type { Services } from '../../../service/services.js';
import { pageRequest } from '../paging-params.js';
import { created, noContent, paged } from '../respond.js';
import type { Handlers } from '../handler.js';
import { actor } from './actor.js';

export function adminHandlers(s: Services): Handlers {
  return {
    async createKey(x, req) {
      const { key, secret } = await s.keys.create(actor(x), req.body as NewKey);
      created(x, { ...key, key: secret }, `/admin/keys/${key.id}`);
      // Secrets are never stored, so an idempotent replay answers without one.
      x.replayBody = key;
    },
    async listKeys(x, req) {
      paged(x, await s.keys.list(actor(x), pageRequest(req)));
    },
    async revokeKey(x, req) {
      await s.keys.revoke(actor(x), req.params.keyId!);
      noContent(x);
    },
    async liftBan(x, req) {
      await s.bans.lift(actor(x), req.params.keyId!);
      noContent(x);
    },
  };
}
