/** The public endpoints every host serves: the contract files and health. */
import type { Contract } from '../../../contract/openapi.js';
import { ServiceUnavailableError } from '../../../service/errors.js';
import type { Handlers } from '../handler.js';

/** Public operations only a host with a file system and a process can serve (the Koa server). */
export const HOST_OPERATIONS = ['getDocs', 'getDocsAsset', 'metrics'] as const;

export interface MetaDeps {
  contract: Contract;
  /** Whether the store is loaded and can make writes durable. */
  ready: () => Promise<boolean>;
}

export function metaHandlers({ contract, ready }: MetaDeps): Handlers {
  return {
    async getOpenApiJson(x) {
      x.status = 200;
      x.type = 'application/json; charset=utf-8';
      x.body = contract.json;
    },
    async getOpenApiYaml(x) {
      x.status = 200;
      x.type = 'application/yaml';
      x.body = contract.yaml;
    },
    async getGraphqlSchema(x) {
      x.status = 200;
      x.type = 'text/plain; charset=utf-8';
      x.body = contract.sdl;
    },
    async healthz(x) {
      x.status = 200;
      x.body = { status: 'ok' };
    },
    async readyz(x) {
      if (!(await ready())) throw new ServiceUnavailableError('The store is not ready.');
      x.status = 200;
      x.body = { status: 'ready' };
    },
  };
}
