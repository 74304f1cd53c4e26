"""docs/fleet.md's failover, behind PgBouncer, run as written (issue 50): a primary with a
synchronous streaming standby, PgBouncer in transaction pooling with its defaults in front.
The primary dies and the standby is promoted; PgBouncer, which does not fail over by itself,
answers "server login has been failing" (a typed `PoolerUnreachableError` naming the step);
the documented step (point `[databases]` at the new primary, RELOAD) is taken; the same store
objects recover without a restart, within PgBouncer's `server_login_retry` (15 s by default),
and nothing committed before the failover is lost or done twice."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from sports_posts._stores import StoreError
from sports_posts._stores.errors import PoolerUnreachableError
from sports_posts.polling import Lease
from sports_posts.webhooks import PostgresDedupeStore, PostgresInbox
from support.servers import PostgresPair, ServerError, private_pgbouncer, repoint_pgbouncer

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.processes]

RECOVERY_BOUND = 60.0  # the test's own bound on waiting (not a timing assertion): 15 s is expected


@pytest.fixture
def pair() -> Iterator[PostgresPair]:
    pair = PostgresPair()
    try:
        pair.start()
    except ServerError as exc:
        pair.close()
        pytest.fail(str(exc))
    yield pair
    pair.close()


def test_a_failover_behind_pgbouncer_recovers_with_the_documented_step(pair: PostgresPair) -> None:
    with private_pgbouncer(pair.primary_url, "transaction") as bouncer:
        store = PostgresDedupeStore(bouncer, connect_timeout=2, statement_timeout=2)
        inbox = PostgresInbox(bouncer, connect_timeout=2, statement_timeout=2)
        lease = Lease(bouncer, key="drill")
        assert store.claim("story-before") is True
        store.complete("story-before")
        assert inbox.put("entry-before", b"{}", "d1") is True
        token = lease.acquire()
        assert token
        lease.release()

        pair.stop_primary()
        pair.promote()
        # PgBouncer answers, but cannot reach its server: the error says so and names the step
        seen: list[StoreError] = []
        deadline = time.monotonic() + RECOVERY_BOUND
        while time.monotonic() < deadline and not any(isinstance(e, PoolerUnreachableError) for e in seen):
            with pytest.raises(StoreError) as failed:
                store.claim("story-during")
            seen.append(failed.value)
        pooler = [e for e in seen if isinstance(e, PoolerUnreachableError)]
        assert pooler, [str(e) for e in seen]
        assert "[databases]" in str(pooler[0]) and "RELOAD" in str(pooler[0])

        repoint_pgbouncer(bouncer, pair.standby_url)  # the documented step
        reloaded = time.monotonic()
        recovered = None
        while recovered is None and time.monotonic() < reloaded + RECOVERY_BOUND:
            try:
                recovered = store.claim("story-after")
            except StoreError:
                continue  # each failed call ended within its own bound (connect_timeout)
        assert recovered is True, "the same store object works again, with no restart"
        took = time.monotonic() - reloaded

        # nothing committed before the failover is lost, nothing is done twice
        assert store.claim("story-before") is False and store.is_complete("story-before")
        assert inbox.get("entry-before") is not None
        assert (lease.acquire() or 0) > token  # the fencing counter went on
        print(f"recovered {took:.1f} s after the RELOAD")
        for closing in (store, inbox, lease):
            closing.close()
