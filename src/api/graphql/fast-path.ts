/**
 * The fast path: runs a cached, validated operation (graphql-js, then its graphql-jit plan) and
 * writes the body Apollo would write for it (`errors`, `data`, then `extensions` with the
 * budget and the cost; errors through the same formatError), or, for an operation over the
 * limits, Apollo's refusal (400 with the measured cost). It declines (undefined) whatever Apollo
 * answers in its own words: a mutation by GET, variables that do not coerce. Declining and
 * refusing happen before any resolver runs.
 */
import type { GraphQLError } from 'graphql';
import { overLimits } from './complexity.js';
import type { GraphQLContext } from './context.js';
import type { PreparedOperation } from './documents.js';
import { formatErrors } from './format-error.js';
import type { GraphQLRequest } from './request.js';

export interface FastAnswer {
  status: 200 | 400;
  text: string;
}

export async function runFastPath(
  op: PreparedOperation,
  req: GraphQLRequest,
  method: string,
  context: GraphQLContext,
  maxCost: number,
): Promise<FastAnswer | undefined> {
  if (method !== 'POST' && op.operation.operation !== 'query') return undefined;
  const measured = op.complexity(req.variables);
  const extensions: Record<string, unknown> = {};
  if (context.rateLimit) extensions.rateLimit = context.rateLimit;
  extensions.cost = measured.cost;
  const refusal = overLimits(measured, maxCost);
  if (refusal) return { status: 400, text: JSON.stringify({ errors: formatErrors([refusal]), extensions }) };
  context.cost = measured.cost;
  const result = await op.execute(context, req.variables);
  // No data at all: the variables did not coerce, and nothing ran.
  if (result.data === undefined) return undefined;
  return {
    status: 200,
    text: JSON.stringify({
      errors: result.errors?.length ? formatErrors(result.errors as readonly GraphQLError[]) : undefined,
      data: result.data,
      extensions,
    }),
  };
}
