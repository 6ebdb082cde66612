/**
 * Where a store reports what an operator should see (outages, torn entries, failed snapshots,
 * a database that comes and goes): the server passes its pino logger, tests a silent one. Its own
 * module so that the engines and `open-store.ts`, which loads them, do not import each other.
 */
export interface StoreLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
