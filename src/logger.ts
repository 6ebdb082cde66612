/** Structured JSON logs on standard error. Secrets never reach a log line: we log key ids only. */
import { pino, type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({ level, base: undefined, redact: ['req.headers["x-api-key"]', 'headers["x-api-key"]'] }, pino.destination(2));
}

export type { Logger };
