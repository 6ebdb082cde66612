/**
 * Ids that name one record, as REST path segments (`/pets/{petId}`) and the GraphQL arguments that
 * mirror them (`pet(id:)`), by one rule (CONTRACT sections 2 and 4): a decimal integer, sign
 * included, is well-formed and names a record or nothing (404 NOT_FOUND, however large, also
 * `-1` and `0`, which no record has); anything else is refused before the service is asked.
 *
 * An id that no JavaScript number holds exactly (above 2^53-1) still reaches the service as the
 * nearest number, which names nothing; `quotingIds` makes the answer quote it as it was sent,
 * never as that number (`9007199254740993`, not `9007199254740992`).
 */
import { isCoded } from './errors.js';

const DECIMAL = /^-?[0-9]+$/;

/** The number a well-formed id names, or undefined when `text` is not a decimal integer. */
export function pathIdOf(text: string): number | undefined {
  return DECIMAL.test(text) ? Number(text) : undefined;
}

/** An id as sent beside the number it became. */
export type SentId = readonly [text: string, value: number];

/** The ids among `sent` whose number prints otherwise than they were sent, or undefined when none. */
export function inexactIds(sent: readonly SentId[]): SentId[] | undefined {
  const out = sent.filter(([text, value]) => String(value) !== text);
  return out.length > 0 ? out : undefined;
}

/**
 * Runs `call`; a domain error it throws that names one of `ids` by its number names it as sent.
 * With no such id (every request with ids as the server writes them) it is `call()` itself.
 */
export async function quotingIds<T>(ids: readonly SentId[] | undefined, call: () => Promise<T>): Promise<T> {
  if (!ids) return call();
  try {
    return await call();
  } catch (err) {
    if (isCoded(err)) {
      for (const [text, value] of ids) err.message = replaceNumber(err.message, String(value), text);
    }
    throw err;
  }
}

/** `message` with every whole occurrence of `printed` (not inside a longer number) replaced by `text`. */
function replaceNumber(message: string, printed: string, text: string): string {
  let out = '';
  let from = 0;
  for (let at = message.indexOf(printed); at >= 0; at = message.indexOf(printed, at + printed.length)) {
    const before = message[at - 1];
    const after = message[at + printed.length];
    if ((before !== undefined && /[0-9.+\-e]/.test(before)) || (after !== undefined && /[0-9]/.test(after))) continue;
    out += message.slice(from, at) + text;
    from = at + printed.length;
  }
  return out + message.slice(from);
}
