/**
 * The key's rate-limit budget, as the last answer described it: REST answers carry it in
 * `X-RateLimit-Limit/Remaining/Reset`, GraphQL answers also in `extensions.rateLimit`. Both
 * surfaces draw on one budget, so whichever answered last is the current figure.
 */
export interface Budget {
  limit: number;
  /** Whole requests left after the one that was answered. */
  remaining: number;
  /** When the window is full again (or the day quota resets). */
  resetAt: Date;
  via: 'REST headers' | 'GraphQL extensions';
}

export function budgetFromHeaders(headers: Headers): Budget | undefined {
  return budget(
    headers.get('x-ratelimit-limit'),
    headers.get('x-ratelimit-remaining'),
    headers.get('x-ratelimit-reset'),
    'REST headers',
  );
}

/** From a GraphQL response's `extensions` (`{ rateLimit: { limit, remaining, reset } }`). */
export function budgetFromExtensions(extensions: unknown): Budget | undefined {
  const rl = (extensions as { rateLimit?: Record<string, unknown> } | undefined)?.rateLimit;
  if (rl === undefined) return undefined;
  return budget(rl.limit, rl.remaining, rl.reset, 'GraphQL extensions');
}

function budget(limit: unknown, remaining: unknown, reset: unknown, via: Budget['via']): Budget | undefined {
  const [l, r, t] = [limit, remaining, reset].map((v) => (v === null || v === undefined || v === '' ? NaN : Number(v)));
  if (!Number.isInteger(l) || !Number.isInteger(r) || !Number.isFinite(t)) return undefined;
  return { limit: l!, remaining: r!, resetAt: new Date(t! * 1000), via };
}

/** Shows a budget in the header: a meter and "287 / 300 left". */
export function showBudget(root: HTMLElement, b: Budget): void {
  const meter = root.querySelector('meter')!;
  meter.max = b.limit;
  meter.value = b.remaining;
  meter.low = b.limit * 0.2;
  meter.optimum = b.limit;
  root.querySelector('#budget-text')!.textContent =
    `${b.remaining} / ${b.limit} left · full again ${b.resetAt.toLocaleTimeString()} · from ${b.via}`;
  root.dataset.remaining = String(b.remaining);
  root.dataset.limit = String(b.limit);
}
