/**
 * The schema, as versioned migrations applied in order at start-up (src/store/postgres/migrate.ts).
 * A migration once released is never edited: a change of schema is a new version at the end.
 *
 * Names are kept in JavaScript's own lower case beside the name (`name_lower`), so substring
 * search and the case-insensitive uniqueness of category names behave exactly as the in-memory
 * store's whatever the database's locale; the trigram index makes `LIKE '%…%'` an index scan.
 * Ids come from sequences: a rolled-back transaction leaves a gap, and no id is handed out twice.
 * Texts that the service formats (dates, idempotency outcomes) are stored as given, byte for byte.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'records, sequences and indexes',
    sql: `
      CREATE EXTENSION IF NOT EXISTS pg_trgm;

      CREATE SEQUENCE pets_id_seq;
      CREATE SEQUENCE categories_id_seq;
      CREATE SEQUENCE orders_id_seq;
      CREATE SEQUENCE keys_id_seq;

      CREATE TABLE categories (
        id bigint PRIMARY KEY,
        name text NOT NULL,
        name_lower text NOT NULL,
        description text
      );
      CREATE UNIQUE INDEX categories_name_lower_key ON categories (name_lower);

      CREATE TABLE pets (
        id bigint PRIMARY KEY,
        name text NOT NULL,
        name_lower text NOT NULL,
        category_id bigint NOT NULL,
        status text NOT NULL CHECK (status IN ('available', 'pending', 'sold')),
        stock integer NOT NULL CHECK (stock >= 0)
      );
      CREATE INDEX pets_status_id ON pets (status, id);
      CREATE INDEX pets_category_id ON pets (category_id, id);
      CREATE INDEX pets_name_trgm ON pets USING gin (name_lower gin_trgm_ops);

      CREATE TABLE orders (
        id bigint PRIMARY KEY,
        pet_id bigint NOT NULL,
        quantity integer NOT NULL,
        ship_date text,
        complete boolean NOT NULL,
        owner_key_id bigint NOT NULL
      );
      CREATE INDEX orders_pet_id ON orders (pet_id, id);
      CREATE INDEX orders_open_pet ON orders (pet_id) WHERE NOT complete;
      CREATE INDEX orders_owner_id ON orders (owner_key_id, id);

      CREATE TABLE api_keys (
        id bigint PRIMARY KEY,
        name text NOT NULL,
        role text NOT NULL,
        plan text NOT NULL,
        per_minute integer NOT NULL,
        per_day integer NOT NULL,
        created_at text NOT NULL,
        hash text NOT NULL UNIQUE
      );

      CREATE TABLE bans (
        key_id bigint PRIMARY KEY,
        until bigint NOT NULL,
        history bigint[] NOT NULL
      );

      CREATE TABLE idempotency (
        scope text PRIMARY KEY,
        fingerprint text NOT NULL,
        outcome text NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE INDEX idempotency_created_at ON idempotency (created_at);

      -- A request under way with an Idempotency-Key, whichever process runs it: a repeat sent to
      -- another process waits for it. A claim lapses at expires_at should its process die.
      CREATE TABLE idempotency_claims (
        scope text PRIMARY KEY,
        token text NOT NULL,
        expires_at timestamptz NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'tell every process of changed keys and bans',
    // Each process remembers keys and bans and LISTENs on this channel (changes.ts); a NOTIFY is
    // delivered at commit only, to every listener, whichever connection or pooler wrote the row.
    sql: `
      CREATE FUNCTION petstore_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_TABLE_NAME = 'api_keys' THEN
          PERFORM pg_notify('petstore_changes', 'key:' || COALESCE(NEW.id, OLD.id));
        ELSE
          PERFORM pg_notify('petstore_changes', 'ban:' || COALESCE(NEW.key_id, OLD.key_id));
        END IF;
        RETURN NULL;
      END
      $$;
      CREATE TRIGGER api_keys_changed AFTER UPDATE OR DELETE ON api_keys
        FOR EACH ROW EXECUTE FUNCTION petstore_notify_change();
      CREATE TRIGGER bans_changed AFTER INSERT OR UPDATE OR DELETE ON bans
        FOR EACH ROW EXECUTE FUNCTION petstore_notify_change();
    `,
  },
  {
    version: 3,
    name: 'the event log',
    // CONTRACT section 14. `events` holds the kept events; `event_log` is one row: `latest`, the
    // highest sequence handed out (every sequence up to it is committed or was dropped), `oldest`
    // (every event below it was dropped) and `dropped_from`, the oldest before the last change of
    // it, so the retention delete walks only [dropped_from, oldest). Sequences are allocated from
    // that row at the end of each writing transaction (postgres-tx.ts explains why that keeps them
    // in the order they become visible). `data` is json, not jsonb: the event's object keeps its
    // keys in the REST shape's order, byte for byte, as the service wrote it.
    sql: `
      CREATE TABLE events (
        sequence bigint PRIMARY KEY,
        type text NOT NULL,
        created_at text NOT NULL,
        data json NOT NULL,
        owner_key_id bigint
      );

      CREATE TABLE event_log (
        id integer PRIMARY KEY CHECK (id = 1),
        latest bigint NOT NULL,
        oldest bigint NOT NULL,
        dropped_from bigint NOT NULL
      );
      INSERT INTO event_log (id, latest, oldest, dropped_from) VALUES (1, 0, 1, 1);
    `,
  },
  {
    version: 4,
    name: 'webhook endpoints and deliveries',
    // CONTRACT section 14. Each record is kept whole as json (`record`, as the service wrote it),
    // beside the columns the queries filter and sort on, which are written from it. A delivery's
    // lease (`lease_until`, epoch ms) is not part of its record: claimDueDeliveries sets it for the
    // one process that makes the attempt (FOR UPDATE SKIP LOCKED), and writing the delivery ends it.
    // `webhook_cursor` is one row: the sequence up to which events have been fanned out to
    // deliveries, locked by the one process at a time that fans out.
    sql: `
      CREATE SEQUENCE webhooks_id_seq;
      CREATE SEQUENCE webhook_deliveries_id_seq;

      CREATE TABLE webhooks (
        id bigint PRIMARY KEY,
        owner_key_id bigint NOT NULL,
        status text NOT NULL,
        record json NOT NULL
      );
      CREATE INDEX webhooks_owner_id ON webhooks (owner_key_id, id);
      CREATE INDEX webhooks_status_id ON webhooks (status, id);

      CREATE TABLE webhook_deliveries (
        id bigint PRIMARY KEY,
        endpoint_id bigint NOT NULL,
        status text NOT NULL,
        next_attempt_at bigint NOT NULL,
        lease_until bigint NOT NULL DEFAULT 0,
        record json NOT NULL
      );
      CREATE INDEX webhook_deliveries_endpoint_id ON webhook_deliveries (endpoint_id, id);
      CREATE INDEX webhook_deliveries_endpoint_status_id ON webhook_deliveries (endpoint_id, status, id);
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';

      CREATE TABLE webhook_cursor (
        id integer PRIMARY KEY CHECK (id = 1),
        sequence bigint NOT NULL
      );
      INSERT INTO webhook_cursor (id, sequence) VALUES (1, 0);
    `,
  },
  {
    version: 5,
    name: 'append events in one call',
    // What postgres-tx.ts sends with COMMIT to number and insert a transaction's events, as one
    // statement: it takes the event log's row (held until COMMIT) and inserts the events (one
    // statement), deletes what retention by count left below `oldest` when there is any, and
    // notifies when asked to (postgres-store.ts spaces the NOTIFYs of a busy process). VOLATILE, so
    // each statement in it reads a snapshot of its own, taken when it starts: the DELETE's is taken
    // once the row is locked, after every earlier writer of events committed, so it sees all of theirs.
    //
    // The event log's row is updated by every such commit: at fillfactor 10 its page is pruned of
    // the row's dead versions every few updates, instead of once it is full, and the UPDATE's scan of
    // that page stays short (measured: about 35 µs of PostgreSQL CPU less per commit). The fan-out
    // cursor's row likewise.
    sql: `
      ALTER TABLE event_log SET (fillfactor = 10);
      ALTER TABLE webhook_cursor SET (fillfactor = 10);

      CREATE FUNCTION petstore_append_events(n bigint, keep bigint, types text[], created text[], datas json[], owners bigint[], notify boolean)
      RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        last bigint;
        was bigint;
        now_oldest bigint;
      BEGIN
        WITH log AS (
          UPDATE event_log SET latest = latest + n, dropped_from = oldest, oldest = GREATEST(oldest, latest + n - keep + 1)
          WHERE id = 1 RETURNING latest, dropped_from, oldest
        ), added AS (
          INSERT INTO events (sequence, type, created_at, data, owner_key_id)
          SELECT log.latest - n + e.i, e.t, e.c, e.d, e.o FROM log, unnest(types, created, datas, owners) WITH ORDINALITY AS e(t, c, d, o, i)
        )
        SELECT log.latest, log.dropped_from, log.oldest INTO last, was, now_oldest FROM log;
        IF was < now_oldest THEN
          DELETE FROM events WHERE sequence >= was AND sequence < now_oldest;
        END IF;
        IF notify THEN
          PERFORM pg_notify('petstore_events', last::text);
        END IF;
        RETURN last;
      END
      $$;
    `,
  },
];
