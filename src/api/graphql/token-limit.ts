/**
 * CONTRACT section 8: a document longer than 3,000 tokens (counted by the parser, which stops
 * lexing at the limit, before any validation) is refused with QUERY_TOO_COMPLEX.
 */
export const MAX_TOKENS = 3000;

export const TOO_MANY_TOKENS = `The query has more than ${MAX_TOKENS} tokens; at most ${MAX_TOKENS} are allowed.`;

/** Whether a parse error is the parser's token limit (graphql-js 16 words it "more that N tokens"). */
export function isTokenLimitError(message: string): boolean {
  return /Document contains more tha[nt] \d+ tokens/.test(message);
}
