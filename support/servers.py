"""Private redis-server and PostgreSQL servers in temp directories on free loopback ports, for
the tests and the benchmarks (``python -m benchmarks.run`` imports this too)."""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from typing import Callable, Optional

INSTALL = "apt-get install -y postgresql"


class ServerError(RuntimeError):
    """The server could not be found or started; the message says how to fix it."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def private_redis() -> Iterator[str]:
    """Yield ``redis://127.0.0.1:PORT/0`` of a redis-server without persistence; stopped at exit."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise ServerError("redis-server is not installed: run `apt-get install -y redis-server` (.ci/test does)")
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="sp-redis-")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", workdir],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                raise ServerError("redis-server did not start")
            time.sleep(0.02)  # polling a child process's start-up, not a timed assertion
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)


def postgres_bindir() -> str:
    """Debian keeps the server binaries out of PATH: ask pg_config, else the newest version dir."""
    candidates = []
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        candidates.append(out.stdout.strip())
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[-2]), reverse=True)
    for bindir in candidates:
        if bindir and os.access(os.path.join(bindir, "initdb"), os.X_OK):
            return bindir
    raise ServerError(f"PostgreSQL is not installed: run `{INSTALL}` (.ci/test does)")


@contextlib.contextmanager
def private_postgres() -> Iterator[str]:
    """Yield ``postgresql://test@127.0.0.1:PORT/postgres``; the server and its files go at exit.

    initdb refuses root, so as root the server runs as the ``postgres`` user of Debian's
    package in a temp directory it owns. ``fsync=off``: tests kill clients, not the machine.
    """
    bindir = postgres_bindir()
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    workdir = tempfile.mkdtemp(prefix="sp-postgres-")
    if as_postgres:
        shutil.chown(workdir, "postgres")
    data, port = os.path.join(workdir, "data"), free_port()
    pg_ctl = os.path.join(bindir, "pg_ctl")
    try:
        initdb = subprocess.run(
            [*as_postgres, os.path.join(bindir, "initdb"), "-D", data, "-A", "trust", "-U", "test", "--no-sync"],
            capture_output=True, text=True, check=False,
        )
        if initdb.returncode != 0:
            raise ServerError(f"initdb failed: {initdb.stderr[-500:]}")
        options = (f"-p {port} -k {workdir} -c listen_addresses=127.0.0.1 -c fsync=off"
                   " -c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        started = subprocess.run(
            [*as_postgres, pg_ctl, "-D", data, "-l", os.path.join(workdir, "log"), "-o", options,
             "-w", "-t", "30", "start"],
            capture_output=True, text=True, check=False,
        )
        if started.returncode != 0:
            raise ServerError(f"PostgreSQL did not start: {started.stderr[-500:]}")
        yield f"postgresql://test@127.0.0.1:{port}/postgres"
    finally:
        if os.path.isdir(data):
            subprocess.run([*as_postgres, pg_ctl, "-D", data, "-m", "immediate", "stop"],
                           capture_output=True, check=False)
        shutil.rmtree(workdir, ignore_errors=True)


# -- Redis Cluster and Sentinel -----------------------------------------------------------

REDIS_INSTALL = "apt-get install -y redis-server redis-tools"


def _redis_binary(name: str) -> str:
    binary = shutil.which(name)
    if binary is None:
        raise ServerError(f"{name} is not installed: run `{REDIS_INSTALL}` (.ci/system-packages does)")
    return binary


def cluster_port() -> int:
    """A free port at most 55535 whose cluster bus port (port + 10000) is free too."""
    import random

    for _ in range(200):
        port = random.randint(20000, 55535)
        try:
            for p in (port, port + 10000):
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    s.bind(("127.0.0.1", p))
        except OSError:
            continue
        return port
    raise ServerError("no free port pair for a cluster node")


def _ping(port: int) -> bytes:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(64)
    except OSError:
        return b""


def _wait(what: str, ready: Callable[[], bool], procs: Sequence[subprocess.Popen[bytes]], seconds: float = 20) -> None:
    """Poll ``ready`` until it holds (a bounded loop over a child's start-up, not a timed assertion)."""
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
            raise ServerError(f"{what} did not come up")
        time.sleep(0.02)


class RedisNode:
    """One redis-server process that a test may kill and start again on the same port."""

    def __init__(self, workdir: str, port: int, *extra: str) -> None:
        self.binary = _redis_binary("redis-server")
        self.port, self.extra = port, list(extra)
        self.dir = os.path.join(workdir, str(port))
        os.makedirs(self.dir, exist_ok=True)
        self.proc: Optional[subprocess.Popen[bytes]] = None

    def start(self, *more: str) -> None:
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.dir, "--repl-diskless-sync-delay", "0", *self.extra, *more],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        _wait(f"redis-server on {self.port}", lambda: _ping(self.port).startswith(b"+PONG"), [self.proc])

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class RedisClusterSetup(list[int]):
    """The master ports of a private Redis Cluster (a list, as callers index it), and its
    nodes: with replicas, a test may kill the master of a key's slot, wait for the cluster to
    promote that master's replica, and start the killed node again (it rejoins as a replica)."""

    def __init__(self, nodes: dict[int, RedisNode], node_timeout_ms: int) -> None:
        super().__init__()
        self.nodes = nodes
        self.node_timeout_ms = node_timeout_ms
        self._replicas: dict[int, list[int]] = {}
        self.cli = _redis_binary("redis-cli")

    def ask(self, port: int, *command: str) -> str:
        """``redis-cli -p PORT COMMAND...``'s output ('' from a node that is down)."""
        return subprocess.run([self.cli, "-p", str(port), *command], capture_output=True, text=True,
                              check=False, timeout=30).stdout

    def _procs(self) -> list[subprocess.Popen[bytes]]:
        return [n.proc for n in self.nodes.values() if n.proc is not None and n.proc.poll() is None]

    def _alive(self) -> list[int]:
        return [port for port, n in self.nodes.items() if n.proc is not None and n.proc.poll() is None]

    def roles(self, seen_by: Optional[int] = None) -> dict[int, tuple[str, int]]:
        """Each node's port -> (``master`` or ``slave``, its master's port; 0 for a master),
        as a live node (``seen_by``, else the first that answers) sees the cluster
        (``CLUSTER NODES``), failed nodes left out."""
        for port in self._alive() if seen_by is None else [seen_by]:
            out = self.ask(port, "cluster", "nodes")
            if not out:
                continue
            ids: dict[str, int] = {}
            rows = [line.split() for line in out.splitlines() if line.strip()]
            for row in rows:
                ids[row[0]] = int(row[1].split("@")[0].rsplit(":", 1)[1])
            roles: dict[int, tuple[str, int]] = {}
            for row in rows:
                flags = row[2].split(",")
                if "fail" in flags or "fail?" in flags:
                    continue
                role = "master" if "master" in flags else "slave"
                roles[ids[row[0]]] = (role, ids.get(row[3], 0) if role == "slave" else 0)
            return roles
        return {}

    def agreed(self) -> bool:
        """Every live node says ``cluster_state:ok`` and sees the same roles as the others
        (a node that just came back learns its new role from them a moment later)."""
        views = [self.roles(seen_by=port) for port in self._alive()]
        return self.healthy() and all(view == views[0] for view in views)

    def masters(self) -> list[int]:
        return sorted(port for port, (role, _) in self.roles().items() if role == "master")

    def master_of(self, key: str) -> int:
        """The port of the master serving ``key``'s slot now."""
        port = self._alive()[0]
        slot = int(self.ask(port, "cluster", "keyslot", key).strip())
        for line in self.ask(port, "cluster", "nodes").splitlines():
            row = line.split()
            if "master" not in row[2].split(",") or "fail" in row[2].split(","):
                continue
            for ranges in row[8:]:
                low, _, high = ranges.partition("-")
                if low.isdigit() and int(low) <= slot <= int(high or low):
                    return int(row[1].split("@")[0].rsplit(":", 1)[1])
        raise ServerError(f"no master serves slot {slot}")

    def replica_of(self, master: int) -> int:
        """The port of a replica of ``master``."""
        for port, (role, of) in self.roles().items():
            if role == "slave" and of == master:
                return port
        raise ServerError(f"no replica of {master}")

    def kill(self, port: int) -> None:
        """SIGKILL the node on ``port`` (a machine that died); its replicas are noted first."""
        self._replicas[port] = [p for p, (role, of) in self.roles().items() if role == "slave" and of == port]
        self.nodes[port].kill()

    def healthy(self) -> bool:
        """Every live node says ``cluster_state:ok`` (every slot served)."""
        alive = self._alive()
        return bool(alive) and all("cluster_state:ok" in self.ask(p, "cluster", "info") for p in alive)

    def wait_promoted(self, old: int, seconds: float = 60) -> int:
        """Until another node serves the slots ``old`` served and the cluster is ok again (a
        bounded poll); that node's port."""
        replica = self._replicas.get(old, [])
        promoted: list[int] = []

        def done() -> bool:
            if not self.agreed():
                return False
            promoted[:] = [p for p in replica if self.roles().get(p, ("", 0))[0] == "master"]
            return bool(promoted)

        _wait("a cluster failover", done, self._procs(), seconds=seconds)
        return promoted[0]

    def restart(self, port: int) -> None:
        """Start a killed node again on its port with its ``nodes.conf``: it rejoins the cluster
        (as a replica of the node that took its slots over), then the cluster is ok."""
        self.nodes[port].start()

        def rejoined() -> bool:
            role = self.roles().get(port)
            if role is None or not self.agreed():
                return False
            if role[0] == "master":  # a master whose slots nobody took over (a cluster without replicas)
                return not self._replicas.get(port)
            return "master_link_status:up" in self.ask(port, "info", "replication")

        _wait("a node's return", rejoined, self._procs(), seconds=60)

    def close(self) -> None:
        for node in self.nodes.values():
            node.stop()


@contextlib.contextmanager
def private_redis_cluster(masters: int = 3, replicas: int = 0) -> Iterator[RedisClusterSetup]:
    """Yield a ``RedisClusterSetup``: the ports of ``masters`` masters (as a list), each with
    ``replicas`` replicas, made with ``redis-cli --cluster create``; every node and its files go
    at exit. With replicas, ``cluster-node-timeout`` is 1000 ms, so that a replica takes over a
    dead master in about two seconds (without, 2000 ms, as before)."""
    cli = _redis_binary("redis-cli")
    workdir = tempfile.mkdtemp(prefix="sp-redis-cluster-")
    node_timeout = 1000 if replicas else 2000
    setup = RedisClusterSetup({}, node_timeout)
    try:
        for _ in range(masters * (1 + replicas)):
            node = RedisNode(workdir, cluster_port(), "--cluster-enabled", "yes",
                             "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", str(node_timeout))
            node.start()
            setup.nodes[node.port] = node
        made = subprocess.run(
            [cli, "--cluster", "create", *(f"127.0.0.1:{p}" for p in setup.nodes),
             "--cluster-replicas", str(replicas), "--cluster-yes"],
            capture_output=True, text=True, check=False, timeout=60,
        )
        if made.returncode != 0:
            raise ServerError(f"redis-cli --cluster create failed: {made.stdout[-500:]} {made.stderr[-500:]}")

        def ok() -> bool:
            if not setup.healthy():
                return False
            roles = setup.roles()
            if len(roles) != len(setup.nodes) or sum(role == "master" for role, _ in roles.values()) != masters:
                return False
            return all("master_link_status:up" in setup.ask(p, "info", "replication")
                       for p, (role, _) in roles.items() if role == "slave")

        _wait("the cluster", ok, setup._procs(), seconds=60)
        setup.extend(setup.masters())
        yield setup
    finally:
        setup.close()
        shutil.rmtree(workdir, ignore_errors=True)


class SentinelSetup:
    """A master, a replica and one sentinel watching them as ``service``; a test may kill the
    master (the sentinel promotes the replica) and start it again as a replica."""

    service = "spmaster"

    def __init__(self, workdir: str) -> None:
        self.workdir = workdir
        first, second = RedisNode(workdir, free_port()), RedisNode(workdir, free_port())
        self.nodes = {first.port: first, second.port: second}
        self.sentinel_port = free_port()
        self.sentinel: Optional[subprocess.Popen[bytes]] = None
        first.start()
        second.start("--replicaof", "127.0.0.1", str(first.port))
        self._wait_linked(second)
        conf = os.path.join(workdir, "sentinel.conf")
        with open(conf, "w") as f:
            f.write(f"port {self.sentinel_port}\nbind 127.0.0.1\ndir {workdir}\nlogfile {workdir}/sentinel.log\n"
                    f"sentinel monitor {self.service} 127.0.0.1 {first.port} 1\n"
                    f"sentinel down-after-milliseconds {self.service} 1000\n"
                    f"sentinel failover-timeout {self.service} 2000\n")
        self.sentinel = subprocess.Popen([_redis_binary("redis-server"), conf, "--sentinel"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.wait_ready()

    def _wait_linked(self, replica: RedisNode) -> None:
        """Until ``replica`` has synced with its master (the sentinel then sees it at once)."""
        cli = _redis_binary("redis-cli")

        def linked() -> bool:
            out = subprocess.run([cli, "-p", str(replica.port), "info", "replication"], capture_output=True,
                                 text=True, check=False).stdout
            return "master_link_status:up" in out

        _wait("a replica's sync", linked, [replica.proc] if replica.proc is not None else [])

    def _ask(self, *command: str) -> str:
        cli = _redis_binary("redis-cli")
        return subprocess.run([cli, "-p", str(self.sentinel_port), *command], capture_output=True, text=True,
                              check=False).stdout

    def master_port(self) -> int:
        """The port the sentinel names as the master now."""
        out = self._ask("sentinel", "get-master-addr-by-name", self.service).split()
        return int(out[1]) if len(out) == 2 else 0

    def wait_ready(self) -> None:
        """Until the sentinel knows a master that answers and a replica it could promote."""
        procs = [p for p in [self.sentinel, *(n.proc for n in self.nodes.values())] if p is not None]

        def ready() -> bool:
            master = self.master_port()
            if master not in self.nodes or not _ping(master).startswith(b"+PONG"):
                return False
            replicas = self._ask("sentinel", "replicas", self.service)
            return "flags\nslave\n" in replicas and "master-link-status\nok" in replicas

        _wait("the sentinel setup", ready, procs, seconds=30)

    def kill_master(self) -> int:
        """SIGKILL the master; its port."""
        port = self.master_port()
        self.nodes[port].kill()
        return port

    def wait_promoted(self, old: int) -> int:
        """Until the sentinel names another master (a bounded poll); its port."""
        procs = [p for p in [self.sentinel] if p is not None]

        def promoted() -> bool:
            if self.master_port() in (0, old):
                return False
            fields = self._ask("sentinel", "master", self.service).split("\n")
            flags = fields[fields.index("flags") + 1] if "flags" in fields else ""
            return flags == "master"  # not s_down, o_down, disconnected or failover_in_progress

        _wait("a failover", promoted, procs, seconds=30)
        return self.master_port()

    def restart_as_replica(self, port: int) -> None:
        """Start a killed node again, following the master of now."""
        self.nodes[port].start("--replicaof", "127.0.0.1", str(self.master_port()))
        self._wait_linked(self.nodes[port])

    def close(self) -> None:
        if self.sentinel is not None and self.sentinel.poll() is None:
            self.sentinel.kill()
            self.sentinel.wait(timeout=10)
        for node in self.nodes.values():
            node.stop()


@contextlib.contextmanager
def private_redis_sentinel() -> Iterator[SentinelSetup]:
    """Yield a ``SentinelSetup``; every process and file goes at exit."""
    workdir = tempfile.mkdtemp(prefix="sp-redis-sentinel-")
    setup: Optional[SentinelSetup] = None
    try:
        setup = SentinelSetup(workdir)
        yield setup
    finally:
        if setup is not None:
            setup.close()
        shutil.rmtree(workdir, ignore_errors=True)


PGBOUNCER_INSTALL = "apt-get install -y pgbouncer"


def _pgbouncer_binary() -> str:
    for candidate in (shutil.which("pgbouncer"), "/usr/sbin/pgbouncer"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise ServerError(f"PgBouncer is not installed: run `{PGBOUNCER_INSTALL}` (.ci/system-packages does)")


def _wait_for_port(port: int, what: str, alive: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            pass
        if time.monotonic() > deadline or not alive():
            raise ServerError(f"{what} did not start")
        time.sleep(0.02)  # polling a child process's start-up, not a timed assertion


@contextlib.contextmanager
def private_pgbouncer(postgres_url: str, pool_mode: str = "transaction") -> Iterator[str]:
    """Yield the URL of a PgBouncer with its default settings (``pool_mode`` aside) in front of
    the server of ``postgres_url``: what a managed PostgreSQL's pooler looks like to a client."""
    from urllib.parse import urlsplit

    binary = _pgbouncer_binary()
    target = urlsplit(postgres_url)
    workdir = tempfile.mkdtemp(prefix="sp-pgbouncer-")
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_postgres:
        shutil.chown(workdir, "postgres")
    port = free_port()
    ini, pidfile = os.path.join(workdir, "pgbouncer.ini"), os.path.join(workdir, "pgbouncer.pid")
    with open(os.path.join(workdir, "users.txt"), "w") as f:
        f.write('"test" ""\n')
    with open(ini, "w") as f:
        f.write(
            "[databases]\n"
            f"* = host=127.0.0.1 port={target.port}\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {port}\nauth_type = trust\n"
            f"auth_file = {workdir}/users.txt\npool_mode = {pool_mode}\nunix_socket_dir =\n"
            f"logfile = {workdir}/pgbouncer.log\npidfile = {pidfile}\nmax_client_conn = 500\n"
        )
    try:
        started = subprocess.run([*as_postgres, binary, "-d", ini], capture_output=True, text=True, check=False)
        if started.returncode != 0:
            raise ServerError(f"PgBouncer did not start: {started.stderr[-500:]}")
        _wait_for_port(port, "PgBouncer", lambda: True)
        url = f"postgresql://test@127.0.0.1:{port}{target.path}"
        _PGBOUNCERS[url] = (ini, pidfile)
        yield url
    finally:
        _PGBOUNCERS.pop(f"postgresql://test@127.0.0.1:{port}{target.path}", None)
        try:
            with open(pidfile) as f:
                os.kill(int(f.read().strip()), signal.SIGTERM)
        except (OSError, ValueError):
            pass
        shutil.rmtree(workdir, ignore_errors=True)


_PGBOUNCERS: dict[str, tuple[str, str]] = {}
"""The running PgBouncers of ``private_pgbouncer``: URL -> (ini file, pid file)."""


def repoint_pgbouncer(url: str, postgres_url: str) -> None:
    """The documented failover step behind PgBouncer, which does not fail over by itself:
    point ``[databases]`` at the new primary (``postgres_url``'s port), then reload the
    configuration (SIGHUP, which PgBouncer documents as the console's ``RELOAD``)."""
    from urllib.parse import urlsplit

    ini, pidfile = _PGBOUNCERS[url]
    with open(ini) as f:
        text = f.read()
    new = re.sub(r"(?m)^\* = host=127\.0\.0\.1 port=\d+$", f"* = host=127.0.0.1 port={urlsplit(postgres_url).port}", text)
    with open(ini, "w") as f:
        f.write(new)
    with open(pidfile) as f:
        os.kill(int(f.read().strip()), signal.SIGHUP)


class PostgresPair:
    """A primary with ``synchronous_standby_names = '*'`` (a commit returns once the standby
    has it) and a streaming standby made by ``pg_basebackup -R``; ``promote()`` fails over."""

    def __init__(self) -> None:
        self.bindir = postgres_bindir()
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.dir = tempfile.mkdtemp(prefix="sp-postgres-pair-")
        if self.as_postgres:
            shutil.chown(self.dir, "postgres")
        self.primary_data = os.path.join(self.dir, "primary")
        self.standby_data = os.path.join(self.dir, "standby")
        self.primary_port, self.standby_port = free_port(), free_port()

    @property
    def url(self) -> str:
        """libpq's multi-host form: whichever of the two accepts writes."""
        return (f"postgresql://test@127.0.0.1:{self.primary_port},127.0.0.1:{self.standby_port}/postgres"
                "?target_session_attrs=read-write")

    def _run(self, *args: str) -> None:
        done = subprocess.run([*self.as_postgres, *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ServerError(f"{os.path.basename(args[0])} failed: {done.stderr[-500:]}")

    def _pg_ctl(self, data: str, *args: str) -> None:
        self._run(os.path.join(self.bindir, "pg_ctl"), "-D", data, "-l", data + ".log", "-w", "-t", "30", *args)

    def _options(self, port: int) -> str:
        return (f"-p {port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c wal_level=replica"
                " -c max_wal_senders=5 -c hot_standby=on -c max_connections=100")

    def start(self) -> None:
        bindir = self.bindir
        self._run(os.path.join(bindir, "initdb"), "-D", self.primary_data, "-A", "trust", "-U", "test", "--no-sync")
        self._pg_ctl(self.primary_data, "-o", self._options(self.primary_port)
                     + " -c synchronous_standby_names=*", "start")
        self._run(os.path.join(bindir, "pg_basebackup"), "-h", "127.0.0.1", "-p", str(self.primary_port),
                  "-U", "test", "-D", self.standby_data, "-R", "--no-sync")
        self._pg_ctl(self.standby_data, "-o", self._options(self.standby_port), "start")

    def stop_primary(self) -> None:
        """The primary goes away (as a machine that died): its port refuses connections."""
        self._pg_ctl(self.primary_data, "-m", "immediate", "stop")

    def promote(self) -> None:
        self._pg_ctl(self.standby_data, "promote")

    @property
    def primary_url(self) -> str:
        return f"postgresql://test@127.0.0.1:{self.primary_port}/postgres"

    @property
    def standby_url(self) -> str:
        return f"postgresql://test@127.0.0.1:{self.standby_port}/postgres"

    def close(self) -> None:
        for data in (self.primary_data, self.standby_data):
            if os.path.isdir(data):
                subprocess.run([*self.as_postgres, os.path.join(self.bindir, "pg_ctl"), "-D", data,
                                "-m", "immediate", "stop"], capture_output=True, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)
