"""Template topics for the generated sessions.

Each topic is a small engineering story (deploys, migrations, flaky tests, ...) with asks,
tool calls, results and answers as format templates; ``turn_context`` draws the values that
fill them, so different prompts score different items.  Pure data plus one drawing function:
all randomness comes from the caller's ``random.Random``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_SERVICES = (
    "billing-api",
    "checkout-web",
    "ledger-worker",
    "auth-gateway",
    "search-indexer",
    "notifications",
    "inventory-svc",
    "reporting-etl",
)
_ENVS = ("prod-eu", "prod-us", "staging-eu", "staging-us")
_TABLES = ("invoices", "payments", "customers", "orders", "ledger_entries", "sessions", "refunds")
_COLUMNS = ("customer_id", "created_at", "status", "external_ref", "currency", "updated_at")
_TESTS = (
    ("test_invoice_rollup", "tests/integration/test_rollup.py"),
    ("test_refund_webhook", "tests/integration/test_webhooks.py"),
    ("test_checkout_flow", "tests/e2e/test_checkout.py"),
    ("test_session_expiry", "tests/unit/test_sessions.py"),
    ("test_search_reindex", "tests/integration/test_search.py"),
    ("test_ledger_balance", "tests/unit/test_ledger.py"),
)
_PEOPLE = ("Priya", "Marco", "Aiko", "Jonas", "Fatima", "Wei", "Sam", "Lucía")
_SLUGS = (
    "add_status_index",
    "split_address_columns",
    "backfill_external_ref",
    "drop_legacy_flags",
    "partition_by_month",
    "add_currency_column",
)
_CACHE_KEYS = ("product:{id}", "cart:{id}", "price:eu:{id}", "session:{id}", "search:q:{id}")


def turn_context(rng: random.Random) -> dict[str, Any]:
    svc = rng.choice(_SERVICES)
    pods = rng.randint(3, 12)
    rev = rng.randint(20, 400)
    minor = rng.randint(3, 30)
    test, testfile = rng.choice(_TESTS)
    ms0 = rng.randint(40, 300)
    s0 = rng.randint(40, 120)
    head = rng.randint(40, 180)
    return {
        "svc": svc,
        "ns": svc.split("-")[0],
        "env": rng.choice(_ENVS),
        "ver": f"2.{minor}.{rng.randint(1, 9)}",
        "prev": f"2.{minor}.0",
        "rev": rev,
        "rev0": rev - 1,
        "pods": pods,
        "n": rng.randint(1, pods - 1),
        "restarts": rng.randint(4, 40),
        "mem": rng.choice((256, 384, 512, 768)),
        "mem2": rng.choice((1024, 1536, 2048)),
        "table": rng.choice(_TABLES),
        "col": rng.choice(_COLUMNS),
        "rows": f"{rng.randint(2, 95)}M",
        "minutes": rng.randint(3, 40),
        "ms0": ms0,
        "ms": ms0 * rng.randint(3, 12),
        "pct": rng.randint(2, 40),
        "head": f"{head:04d}",
        "head0": f"{head - rng.randint(1, 4):04d}",
        "slug": rng.choice(_SLUGS),
        "test": test,
        "testfile": testfile,
        "run": rng.randint(8_100_000_000, 8_199_999_999),
        "k": rng.randint(1, 9),
        "s0": s0,
        "s": s0 + rng.randint(20, 200),
        "kb": rng.randint(40, 900),
        "hour": rng.randint(0, 22),
        "person": rng.choice(_PEOPLE),
        "pr": rng.randint(300, 2400),
        "pod": f"{svc}-{rng.getrandbits(36):09x}-{rng.getrandbits(20):05x}",
        "key": rng.choice(_CACHE_KEYS).format(id=rng.randint(1000, 99999)),
        "hits": rng.randint(60, 99),
        "seed": rng.randint(1, 9999),
        "lines": rng.randint(2, 60),
    }


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    args: Callable[[dict[str, Any]], dict[str, Any]]
    output: str
    error: bool = False


@dataclass(frozen=True, slots=True)
class Topic:
    key: str
    asks: tuple[str, ...]
    intros: tuple[str, ...]
    tools: tuple[Tool, ...]
    answers: tuple[str, ...]
    notes: tuple[str, ...]
    cjk: tuple[str, ...]
    thoughts: tuple[str, ...]


TOPICS: tuple[Topic, ...] = (
    Topic(
        key="deploy",
        asks=(
            "The {svc} rollout in {env} is stuck at {n}/{pods} ready pods. Can you see what's wrong?",
            "helm upgrade of {svc} {ver} timed out in {env}. Should we roll back?",
            "Can you roll back {svc} in {env} to the previous helm revision? {ver} returns 502s on /checkout.",
            "Pods of {svc} keep restarting after the deploy ({restarts} restarts in 10 minutes). What's going on?",
            "What changed between helm revision {rev0} and {rev} of {svc}?",
            "Readiness probes of {svc} fail in {env} since the last kubernetes deploy.",
        ),
        intros=(
            "Let me check the rollout status first.",
            "Checking the release history and the pod events.",
            "I'll look at the pods in the {ns} namespace.",
        ),
        tools=(
            Tool(
                "bash",
                lambda c: {
                    "command": "kubectl rollout status deploy/{svc} -n {ns} --context {env} --timeout 60s".format(**c)
                },
                'Waiting for deployment "{svc}" rollout to finish: {n} of {pods} updated replicas are available...\n'
                "error: timed out waiting for the condition",
                error=True,
            ),
            Tool(
                "bash",
                lambda c: {"command": "helm history {svc} -n {ns} --kube-context {env} --max 3".format(**c)},
                "REVISION  UPDATED                   STATUS      CHART            APP VERSION  DESCRIPTION\n"
                "{rev0}       Mon Nov  3 09:12:44 2025  superseded  {svc}-1.8.0    {prev}       Upgrade complete\n"
                "{rev}       Tue Nov  4 14:02:10 2025  deployed    {svc}-1.9.0    {ver}       Upgrade complete",
            ),
            Tool(
                "bash",
                lambda c: {
                    "command": "kubectl get pods -n {ns} --context {env} -l app.kubernetes.io/name={svc}".format(**c)
                },
                "NAME                              READY   STATUS             RESTARTS        AGE\n"
                "{pod}   0/1     CrashLoopBackOff   {restarts} (41s ago)   12m\n"
                "{svc}-7d9c6b5f4-x2m8q            1/1     Running            0               3d",
            ),
            Tool(
                "bash",
                lambda c: {"command": "helm rollback {svc} {rev0} -n {ns} --kube-context {env} --wait".format(**c)},
                "Rollback was a success! Happy Helming!",
            ),
            Tool(
                "bash",
                lambda c: {"command": "kubectl describe pod {pod} -n {ns} --context {env} | tail -n 5".format(**c)},
                "Events:\n  Type     Reason     Age                From     Message\n"
                "  Warning  Unhealthy  2m (x{restarts} over 9m)  kubelet  Readiness probe failed: HTTP probe failed "
                "with statuscode: 503\n"
                "  Warning  BackOff    40s (x{n} over 8m)   kubelet  Back-off restarting failed container api",
            ),
            Tool(
                "read",
                lambda c: {"path": "charts/{svc}/values.yaml".format(**c)},
                "replicaCount: {pods}\nimage:\n  repository: registry.internal.example.com/{ns}/{svc}\n"
                "  tag: {ver}\nstrategy:\n  maxSurge: 1\n  maxUnavailable: 0\nresources:\n  limits:\n"
                "    memory: {mem}Mi\nreadiness:\n  path: /healthz/ready\n  periodSeconds: 5",
            ),
        ),
        answers=(
            "The new ReplicaSet never became ready: the readiness probe on /healthz/ready returns 503 because {svc} "
            "{ver} waits for a config key that only exists in staging. `helm rollback {svc} {rev0}` is safe; the "
            "real fix is adding the key to values/{env}.yaml.",
            "Rollback done: {svc} is back on helm revision {rev0} in {env} and all {pods} pods are ready. The failed "
            "revision {rev} stays in the history for the post-mortem.",
            "The restarts are OOM kills: the container limit is {mem}Mi and {svc} {ver} loads the whole price "
            "catalogue at startup. Raising the limit to {mem2}Mi in values.yaml, or loading the catalogue lazily, "
            "fixes the crash loop.",
            "Between revision {rev0} and {rev} only the image tag and maxUnavailable changed (0 → 25%). With {pods} "
            "replicas that lets a pod go down before its replacement is ready, which explains the 502s during the "
            "rollout.",
        ),
        notes=(
            "{svc} rollout in {env} stalled at {n}/{pods} ready pods; readiness probe on /healthz/ready failing.",
            "Rolled back {svc} in {env} to helm revision {rev0} after {ver} returned 502s.",
            "helm upgrade of {svc} {ver} timed out in {env}; kubernetes events show readiness failures.",
            "{svc} pods OOM-killed after the {ver} deploy; memory limit raised from {mem}Mi to {mem2}Mi.",
        ),
        cjk=(
            "{svc} 在 {env} 的部署又失败了，要不要先回滚到上一个版本？",
            "{svc} の {env} へのデプロイが失敗しました。ロールバックしたほうがいいですか？",
        ),
        thoughts=(
            "The rollout is stuck, so either the new pods never become ready or the old ones cannot be removed. "
            "The pod events will tell which.",
            "Before rolling back I want the revision history, so the rollback target is the last good revision and "
            "not just the previous one.",
        ),
    ),
    Topic(
        key="database",
        asks=(
            "The migration on {table} has been running for {minutes} minutes in {env}. Is it blocking anything?",
            "Can you write a database migration that adds an index on {table}({col}) without locking the table?",
            "Alembic says head is {head} but prod is on {head0}. How do we get there safely?",
            "Queries on {table} got slow after last night's migration: p95 went from {ms0} ms to {ms} ms.",
            "Is it safe to drop {table}.{col} now that {svc} {ver} no longer reads it?",
        ),
        intros=(
            "Checking what the migration is waiting on (read replica only).",
            "Let me read the migration first.",
            "I'll compare the query plans before and after.",
        ),
        tools=(
            Tool(
                "bash",
                lambda c: {
                    "command": 'psql "$REPLICA_URL" -c "select pid, wait_event_type, state, '
                    "left(query, 50) from pg_stat_activity where wait_event_type = "
                    "'Lock'\"".format(**c)
                },
                "  pid  | wait_event_type | state  |                       left\n"
                "-------+-----------------+--------+---------------------------------------------------\n"
                " 48211 | Lock            | active | ALTER TABLE {table} ADD COLUMN {col}_v2 text\n"
                " 48377 | Lock            | active | INSERT INTO {table} (id, {col}, created_at) VALUES\n"
                "({n} rows)",
            ),
            Tool(
                "read",
                lambda c: {"path": "migrations/versions/{head}_{slug}.py".format(**c)},
                '"""{slug}\n\nRevision ID: {head}\nRevises: {head0}\n"""\nfrom alembic import op\n\n'
                'revision = "{head}"\ndown_revision = "{head0}"\n\n\ndef upgrade() -> None:\n'
                '    op.create_index("ix_{table}_{col}", "{table}", ["{col}"])\n',
            ),
            Tool(
                "bash",
                lambda c: {"command": "alembic history -r {head0}:{head}".format(**c)},
                "{head0} -> {head} (head), {slug}\n{head0} (branchpoint) -> {head0}_hotfix, fix {table} defaults",
            ),
            Tool(
                "bash",
                lambda c: {
                    "command": 'psql "$REPLICA_URL" -c "explain analyze select * from {table} '
                    'where {col} = $1 order by created_at desc limit 50"'.format(**c)
                },
                "Limit  (cost=0.56..212.40 rows=50 width=188) (actual time={ms}.113..{ms}.402 rows=50 loops=1)\n"
                "  ->  Seq Scan on {table}  (cost=0.00..1894211.00 rows=44710 width=188)\n"
                "        Filter: ({col} = '42'::text)\n        Rows Removed by Filter: {rows}\n"
                "Planning Time: 0.412 ms\nExecution Time: {ms}.488 ms",
            ),
            Tool(
                "grep",
                lambda c: {"pattern": "{col}".format(**c), "path": "src", "-n": True},
                "src/{ns}/models.py:{lines}:    {col} = mapped_column(String(64), index=True)\n"
                "src/{ns}/repository.py:{n}{k}:        .where({table}.c.{col} == value)",
            ),
        ),
        answers=(
            "The migration holds an ACCESS EXCLUSIVE lock on {table} while it rewrites the table, and {n} sessions "
            "are queued behind it. On {rows} rows this kind of database migration has to be split: CREATE INDEX "
            "CONCURRENTLY for indexes, batched updates for backfills.",
            "Here is a migration that builds ix_{table}_{col} CONCURRENTLY inside an autocommit block, so {table} "
            "stays writable. It takes longer (about {minutes} minutes on {rows} rows) but never blocks writes.",
            "The planner switched to a sequential scan because the migration dropped the old composite index before "
            "the new one was valid. Recreating ix_{table}_{col} brings p95 back to {ms0} ms.",
            "Yes, once {svc} {ver} is fully rolled out. Do it in two releases: stop writing the column, deploy, then "
            "drop it in a later migration so that a rollback to {prev} still works.",
        ),
        notes=(
            "Migration {head} on {table} ({rows} rows) held an ACCESS EXCLUSIVE lock for {minutes} minutes in {env}.",
            "New migration builds ix_{table}_{col} with CREATE INDEX CONCURRENTLY in an autocommit block.",
            "p95 of {table} queries regressed from {ms0} ms to {ms} ms after the migration dropped an index.",
            "Dropping {table}.{col} split into two releases so rollback to {prev} stays possible.",
        ),
        cjk=(
            "{table} 表的数据库迁移已经跑了 {minutes} 分钟，还在锁表吗？",
            "{table} のマイグレーションが {minutes} 分以上かかっています。本番のデータベースは大丈夫ですか？",
        ),
        thoughts=(
            "A migration that runs this long on a big table is usually either waiting for a lock or rewriting the "
            "table. pg_stat_activity on the replica tells which without touching the primary.",
        ),
    ),
    Topic(
        key="tests",
        asks=(
            "{test} failed again on CI (run {run}). Is it flaky or did we break something?",
            "Can you find out why {test} only fails under pytest-xdist?",
            "CI was red {k} times this week, always in tests/integration. Is there a pattern in the flaky tests?",
            "Please quarantine {test} until we fix it, it blocks every merge.",
        ),
        intros=(
            "Let me pull the failing log from CI.",
            "I'll try to reproduce it locally with random ordering.",
            "Reading the test first.",
        ),
        tools=(
            Tool(
                "bash",
                lambda c: {"command": "gh run view {run} --log-failed | tail -n 4".format(**c)},
                "test (3.12)  Run pytest  FAILED {testfile}::{test} - AssertionError: assert {n}{k} == {k}{n}\n"
                "test (3.12)  Run pytest  = 1 failed, {pr} passed, 4 skipped in 211.90s (0:03:31) =",
            ),
            Tool(
                "bash",
                lambda c: {
                    "command": 'pytest {testfile}::{test} -q --count=30 -p randomly -p "randomly_seed={seed}"'.format(
                        **c
                    )
                },
                "..F....F......................                                            [100%]\n"
                "FAILED {testfile}::{test}[{k}-30] - AssertionError\n2 failed, 28 passed in 9.84s",
                error=True,
            ),
            Tool(
                "read",
                lambda c: {"path": c["testfile"], "offset": 1, "limit": 30},
                'import time\n\nimport pytest\n\n\ndef {test}(client, worker):\n    job = client.post("/jobs").json()\n'
                "    time.sleep(0.5)  # wait for the worker\n    assert client.get(f\"/jobs/{{job['id']}}\").json()"
                '["state"] == "done"',
            ),
            Tool(
                "grep",
                lambda c: {"pattern": "time.sleep|date.today", "path": "tests", "-n": True},
                "{testfile}:{lines}:    time.sleep(0.5)  # wait for the worker\n"
                "tests/integration/test_rollup.py:11:    today = date.today()",
            ),
        ),
        answers=(
            "{test} is flaky, not broken: it asserts on rows returned without ORDER BY and fails 2/30 runs locally "
            "with random ordering. Adding ORDER BY id makes the test deterministic.",
            "Under pytest-xdist the workers share one test database while the fixture numbers records from a "
            "module-level counter, so two workers insert the same key. Putting the worker id into the key fixes it.",
            "The {k} red runs all hit tests that sleep to wait for the background worker. Replacing the sleeps with "
            "polling on the job state made the flaky tests pass 200 reruns in a row.",
            "I marked {test} with @pytest.mark.flaky(reruns=2) and opened an issue to fix it properly; CI is green "
            "again.",
        ),
        notes=(
            "{test} is a flaky test (unordered query results), fixed with ORDER BY id; 30/30 passes with random "
            "ordering.",
            "xdist workers shared a counter-based fixture key; {test} fixed by including the worker id.",
            "Flaky integration tests traced to time.sleep() waits; replaced by polling, 200 CI reruns green.",
            "{test} quarantined with @pytest.mark.flaky(reruns=2) pending a real fix.",
        ),
        cjk=(
            "{test} 这个测试在 CI 上又失败了，是不稳定的测试吗？",
            "{test} のテストがまた CI で落ちました。フレーキーなテストでしょうか？",
        ),
        thoughts=(
            "A test that fails one run in ten is almost always order- or timing-dependent. Random ordering with a "
            "fixed seed should reproduce it.",
        ),
    ),
    Topic(
        key="frontend",
        asks=(
            "The production build of checkout-web went from {s0}s to {s}s. What happened?",
            "The checkout bundle grew by {kb} KB after the last merge. Can you find the culprit?",
            "We get a hydration mismatch warning on /cart in production. Any idea?",
            "Lighthouse score for the product page dropped to {hits}. Is it the new hero image?",
        ),
        intros=("Let me run the build and look at the chunk sizes.", "Checking the bundle composition."),
        tools=(
            Tool(
                "bash",
                lambda c: {"command": "npx vite build --mode production"},
                "vite v5.4.2 building for production...\n✓ 1843 modules transformed.\n"
                "dist/assets/index-4f8a2c1e.js     {kb}.{k}2 kB │ gzip: {n}{k}.41 kB\n"
                "dist/assets/vendor-9b3e7d20.js   1,204.77 kB │ gzip: 371.06 kB\n"
                "(!) Some chunks are larger than 500 kB after minification.\n✓ built in {s}.{k}s",
            ),
            Tool(
                "grep",
                lambda c: {"pattern": "Date.now\\(\\)|Math.random\\(\\)", "path": "src/components", "-n": True},
                "src/components/CartSummary.tsx:{lines}:  const renderedAt = Date.now();\n"
                "src/components/PromoBanner.tsx:{n}{k}:  const variant = Math.random() > 0.5 ? 'a' : 'b';",
            ),
            Tool(
                "read",
                lambda c: {"path": "vite.config.ts"},
                "export default defineConfig({{\n  plugins: [react()],\n  build: {{\n    sourcemap: true,\n"
                "    rollupOptions: {{ output: {{ manualChunks: undefined }} }},\n  }},\n}});",
            ),
        ),
        answers=(
            "The build got slower because source maps were switched on for production in vite.config.ts; with "
            "1,843 modules that doubles the time. Turning them into hidden source maps keeps error reports working.",
            "The {kb} KB come from importing the whole date-fns locale set in PromoBanner. Importing only the two "
            "locales we ship brings the bundle back under 500 kB.",
            "The hydration mismatch comes from CartSummary rendering Date.now() on the server and again on the "
            "client. Rendering the timestamp in an effect removes the warning.",
        ),
        notes=(
            "checkout-web production build slowed from {s0}s to {s}s: source maps enabled in vite.config.ts.",
            "Bundle +{kb} KB traced to a full date-fns locale import in PromoBanner.",
            "Hydration mismatch on /cart caused by Date.now() during server rendering.",
        ),
        cjk=("结账页面的打包体积又变大了 {kb} KB，能查一下原因吗？",),
        thoughts=("Build time and bundle size usually move together; the chunk report shows which one changed.",),
    ),
    Topic(
        key="auth",
        asks=(
            "Users get logged out after {minutes} minutes even though the session TTL is 12h. Can you check "
            "auth-gateway?",
            "The OAuth callback fails with invalid_grant for some users since this morning.",
            "Rotate the JWT signing key for auth-gateway without logging everyone out.",
            "SSO login from the partner portal loops back to /login. What broke?",
        ),
        intros=("Let me look at the session settings.", "Checking the token endpoint responses."),
        tools=(
            Tool(
                "read",
                lambda c: {"path": "services/auth-gateway/config/{env}.yaml".format(**c)},
                "session:\n  ttl: 12h\n  refresh_window: 15m\n  cookie:\n    same_site: strict\n"
                "jwt:\n  issuer: https://auth.internal.example.com\n  access_token_ttl: {minutes}m\n"
                "  signing_keys: [key-2025-10]",
            ),
            Tool(
                "bash",
                lambda c: {
                    "command": "kubectl logs deploy/auth-gateway -n auth --context {env} --since=1h "
                    "| grep invalid_grant | tail -n 3".format(**c)
                },
                '2025-11-04T0{k}:12:03Z WARN token exchange failed error=invalid_grant reason="code expired" '
                "skew_ms={ms}\n"
                '2025-11-04T0{k}:12:41Z WARN token exchange failed error=invalid_grant reason="code expired" '
                "skew_ms={ms0}",
            ),
            Tool(
                "grep",
                lambda c: {"pattern": "same_site|SameSite", "path": "services/auth-gateway", "-n": True},
                "services/auth-gateway/config/{env}.yaml:5:    same_site: strict\n"
                "services/auth-gateway/src/session.ts:{lines}:  sameSite: config.session.cookie.same_site,",
            ),
        ),
        answers=(
            "The 12h TTL is fine; the access token lives {minutes} minutes and the refresh window is only 15 "
            "minutes, so clients that sleep longer cannot refresh the session. Widening the refresh window fixes "
            "the early logouts.",
            "invalid_grant comes from clock skew: pods on two nodes are {ms} ms behind NTP, so authorization codes "
            "look expired. Restarting chrony on those nodes fixed it.",
            "Key rotation plan: publish key-2025-11 in the JWKS next to key-2025-10, sign new tokens with the new "
            "key, and drop the old key after the longest token TTL has passed. Nobody gets logged out.",
            "The SSO loop is the session cookie's SameSite=strict: the partner portal redirect is cross-site, so "
            "the browser drops the cookie. SameSite=lax is enough for a top-level redirect.",
        ),
        notes=(
            "Early logouts: access token TTL {minutes}m with a 15m refresh window; refresh window widened.",
            "OAuth invalid_grant caused by {ms} ms clock skew on two nodes; chrony restarted.",
            "JWT signing key rotation planned with both keys in the JWKS during the overlap.",
            "SSO redirect loop fixed by switching the session cookie from SameSite=strict to lax.",
        ),
        cjk=("合作伙伴门户的单点登录又一直跳回登录页了。",),
        thoughts=("Logouts long before the TTL usually mean the refresh path fails, not the session store.",),
    ),
    Topic(
        key="observability",
        asks=(
            "The p99 latency alert for {svc} fired at {hour}:00. Is it real?",
            "Can you add a Prometheus alert for {svc} when the 5xx rate is above {pct}% for 10 minutes?",
            "Grafana shows a gap in the {svc} metrics between {hour}:00 and {hour}:20. Did scraping stop?",
        ),
        intros=("Querying Prometheus for the last hour.", "Let me look at the alert rules."),
        tools=(
            Tool(
                "bash",
                lambda c: {
                    "command": "promql 'histogram_quantile(0.99, sum by (le) (rate("
                    'http_request_duration_seconds_bucket{{service="{svc}"}}[5m])))\' '
                    "--since 1h".format(**c)
                },
                "time                  value\n{hour}:00  0.{k}{n}1\n{hour}:05  {n}.{k}04\n{hour}:10  {n}.{k}87\n"
                "{hour}:15  0.{k}12",
            ),
            Tool(
                "read",
                lambda c: {"path": "deploy/alerts/{svc}.rules.yaml".format(**c)},
                "groups:\n  - name: {svc}\n    rules:\n      - alert: {svc}HighLatency\n"
                "        expr: histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket"
                '{{service="{svc}"}}[5m]))) > 1\n        for: 5m',
            ),
            Tool(
                "bash",
                lambda c: {
                    "command": "kubectl get servicemonitor {svc} -n monitoring -o "
                    "jsonpath='{{.spec.endpoints[0].interval}}'".format(**c)
                },
                "30s",
            ),
        ),
        answers=(
            "The alert is real but short: p99 went over 1 s for about 12 minutes around {hour}:05, in step with a "
            "batch job that saturated the database pool. It recovered without intervention.",
            "Added {svc}HighErrorRate: sum(rate(5xx)) / sum(rate(all)) > {pct}% for 10m, severity page, with a "
            "runbook link. promtool check rules passes.",
            "Scraping did not stop; the Prometheus pod was rescheduled at {hour}:00 and its WAL replay took 20 "
            "minutes. Enabling the second replica avoids the gap.",
        ),
        notes=(
            "{svc} p99 latency alert at {hour}:00 was real: database pool saturation from a batch job.",
            "New Prometheus alert {svc}HighErrorRate (5xx > {pct}% for 10m) with runbook link.",
            "Metrics gap {hour}:00-{hour}:20 caused by a Prometheus reschedule and WAL replay.",
        ),
        cjk=("{svc} の p99 レイテンシのアラートが {hour} 時に鳴りました。本物ですか？",),
        thoughts=("Before trusting the alert I want the raw quantile over the window, not just the alert state.",),
    ),
    Topic(
        key="cache",
        asks=(
            "Redis memory on cache-{env} is at {hits}% and evictions started. What's filling it?",
            "After the deploy every cache miss on product pages hits the database at once. Is this a cache stampede?",
            "The cache hit rate for {svc} dropped from {hits}% to {pct}% overnight.",
        ),
        intros=("Checking Redis memory and the biggest keys.", "Let me look at the cache TTL settings."),
        tools=(
            Tool(
                "bash",
                lambda c: {"command": "redis-cli -h cache-{env} info memory | head -n 4".format(**c)},
                "# Memory\nused_memory_human:{n}.{k}1G\nmaxmemory_human:{pods}.00G\nmaxmemory_policy:allkeys-lru",
            ),
            Tool(
                "bash",
                lambda c: {"command": "redis-cli -h cache-{env} --bigkeys | tail -n 3".format(**c)},
                "Biggest string found '{key}' has {kb}{k}12 bytes\n"
                "Biggest   hash found 'search:facets:all' has {pr} fields\n"
                "{pr}{k} keys with {n}{k}.2M bytes total",
            ),
            Tool(
                "grep",
                lambda c: {"pattern": "ttl=|expire", "path": "src/{ns}/cache".format(**c), "-n": True},
                "src/{ns}/cache/products.py:{lines}:    cache.set(key, value, ttl=3600)\n"
                "src/{ns}/cache/search.py:{n}:    cache.set(key, facets)  # no expire",
            ),
        ),
        answers=(
            "Memory is full of search:facets keys written without a TTL; they never expire, so LRU evicts product "
            "pages instead. Adding a 15-minute TTL to the facets cache frees about {n} GB.",
            "Yes, a stampede: all product keys were written with the same 3600 s TTL during the deploy warm-up, so "
            "they expire together. Adding jitter to the TTL and a single-flight lock on misses fixes it.",
            "The hit rate dropped because {svc} {ver} changed the cache key format, so every old entry became a "
            "miss. It recovers as the cache refills; next time, version the key prefix and warm it before the "
            "switch.",
        ),
        notes=(
            "cache-{env} Redis at {hits}% memory: search facets stored without TTL; 15-minute TTL added.",
            "Cache stampede on product pages after deploy: synchronized TTLs; jitter and single-flight added.",
            "{svc} cache hit rate fell to {pct}% after a key-format change in {ver}.",
        ),
        cjk=("缓存命中率一夜之间从 {hits}% 掉到了 {pct}%，是不是部署导致的？",),
        thoughts=("Evictions with allkeys-lru mean something large and long-lived is crowding out the hot keys.",),
    ),
    Topic(
        key="payments",
        asks=(
            "Some orders are marked paid twice. Can you check the payment webhook handler?",
            "Stripe webhook deliveries to {svc} fail with 400 since the deploy of {ver}.",
            "A customer was refunded twice for order {pr}{k}. How did that happen?",
        ),
        intros=("Let me read the webhook handler.", "Checking the webhook delivery log."),
        tools=(
            Tool(
                "read",
                lambda c: {"path": "src/payments/webhook_handler.py"},
                'def handle(event: dict) -> None:\n    order = orders.get(event["data"]["object"]["metadata"]'
                '["order_id"])\n    order.mark_paid(event["data"]["object"]["amount_received"])\n'
                '    ledger.record_payment(order, event["id"])',
            ),
            Tool(
                "grep",
                lambda c: {"pattern": "idempotency|event_id", "path": "src/payments", "-n": True},
                "src/payments/refunds.py:{lines}:    stripe.Refund.create(payment_intent=pi, "
                "idempotency_key=None)\n"
                "src/payments/ledger.py:{n}{k}:    def record_payment(self, order, event_id):",
            ),
            Tool(
                "bash",
                lambda c: {
                    "command": "kubectl logs deploy/{svc} -n payments --context {env} --since=30m | "
                    "grep webhook | tail -n 2".format(**c)
                },
                'WARN webhook rejected status=400 reason="No signatures found matching the expected signature for '
                'payload" event=evt_{seed}\nWARN webhook rejected status=400 reason="No signatures found" '
                "event=evt_{pr}",
            ),
        ),
        answers=(
            "The handler is not idempotent: Stripe retries a webhook when our response takes more than 10 s, and "
            "each retry marks the order paid again. Storing processed event ids under a unique constraint makes "
            "retries harmless.",
            "{ver} parses the JSON body before verifying the signature, so the bytes no longer match what Stripe "
            "signed. Verifying against the raw request body fixes the 400s.",
            "The refund call passes idempotency_key=None, so the client's automatic retry after a timeout created a "
            "second refund. Using the order id plus the refund reason as the idempotency key prevents it.",
        ),
        notes=(
            "Double-paid orders caused by webhook retries; processed event ids now stored with a unique constraint.",
            "Webhook 400s after {ver}: signature verified on parsed JSON instead of the raw body.",
            "Double refund for order {pr}{k}: refund created without an idempotency key.",
        ),
        cjk=("有些订单被重复标记为已支付了，能看一下支付回调吗？",),
        thoughts=("Double effects from a webhook almost always mean retries plus a handler without idempotency.",),
    ),
)

SYSTEM_NOTES = (
    "Deploy freeze for all production services from 17:00 UTC Friday to 08:00 UTC Monday.",
    "On-call handover: {person} is primary for the platform rotation this week.",
    "Maintenance window: the {env} Postgres primary fails over at 02:00 UTC for a minor version upgrade.",
)


def fill(template: str, ctx: dict[str, Any]) -> str:
    return template.format(**ctx)
