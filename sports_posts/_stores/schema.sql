-- Every table of sports_posts' PostgreSQL stores (inboxes, dedupe, CallBudget, Lease, PostgresCheckpoint).
-- Run once with a role allowed to create tables (any store's migrate() does the same),
-- or let the stores create them on first use (auto_migrate=True, the default).
-- Times are epoch seconds (double precision), read from the server's clock by default.

-- The inbox: one row per story (key = the dedupe key), leased by workers with
-- SELECT ... FOR UPDATE SKIP LOCKED; token fences a worker whose lease lapsed.
CREATE TABLE IF NOT EXISTS sports_posts_inbox (
    key          text PRIMARY KEY,
    body         bytea NOT NULL,
    delivery_id  text,
    state        text NOT NULL CHECK (state IN ('pending', 'processing', 'done', 'dead')),
    attempts     integer NOT NULL DEFAULT 0,   -- handler runs that ended (done or failed)
    deliveries   integer NOT NULL DEFAULT 0,   -- times leased, including to workers that died
    due_at       double precision NOT NULL,    -- pending: next try; processing: lease end; done: forget
    token        text NOT NULL DEFAULT '',
    received_at  double precision NOT NULL,
    last_error   text
);
CREATE INDEX IF NOT EXISTS sports_posts_inbox_due ON sports_posts_inbox (due_at)
    WHERE state IN ('pending', 'processing');
CREATE INDEX IF NOT EXISTS sports_posts_inbox_state ON sports_posts_inbox (state, due_at);

-- Dedupe claims: token '' = done until expires_at; otherwise a claim leased until expires_at.
CREATE TABLE IF NOT EXISTS sports_posts_claims (
    key         text PRIMARY KEY,
    token       text NOT NULL,
    expires_at  double precision NOT NULL
);

-- Effects claimed inside the customer's own transaction (PostgresDedupeStore.claim_in):
-- the row commits or rolls back with the customer's writes.
CREATE TABLE IF NOT EXISTS sports_posts_effects (
    key      text PRIMARY KEY,
    done_at  double precision NOT NULL
);

-- CallBudget: one row per budget key, counted in the server's minute and UTC month.
CREATE TABLE IF NOT EXISTS sports_posts_budget (
    key          text PRIMARY KEY,
    minute       bigint NOT NULL,
    minute_used  bigint NOT NULL,
    month        integer NOT NULL,
    month_used   bigint NOT NULL,
    at_ms        bigint NOT NULL,
    granted      boolean NOT NULL
);
-- The bounds the last draw was made with (NULL: not set; -1 in both: none stored yet), for
-- an operator's `sports-posts budget status`. Added after the table's first release.
ALTER TABLE sports_posts_budget ADD COLUMN IF NOT EXISTS per_minute bigint;
ALTER TABLE sports_posts_budget ADD COLUMN IF NOT EXISTS per_month bigint;

-- Lease: one row per feed; token is the fencing counter (kept when the lease is freed).
CREATE TABLE IF NOT EXISTS sports_posts_leases (
    key         text PRIMARY KEY,
    holder      text NOT NULL,
    expires_at  timestamptz NOT NULL,
    token       bigint NOT NULL
);

-- PostgresCheckpoint: a poller's state, compare-and-set on generation, fenced by fence.
CREATE TABLE IF NOT EXISTS sports_posts_checkpoints (
    key         text PRIMARY KEY,
    state       text,
    generation  bigint NOT NULL DEFAULT 0,
    fence       bigint NOT NULL DEFAULT 0
);
