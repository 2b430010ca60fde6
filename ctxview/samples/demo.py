"""The demo session: one hand-written working morning, and the host's live window after it.

One working morning on a flaky production deploy of a billing service: helm upgrades that
time out in a pre-upgrade migration hook, a blocking index build, a single-statement
backfill, a flaky CI test, a runbook for helm rollback.  The first part of the morning is
compacted into leaf and condensed summaries (depths 0-2); the rest is raw context.  A
second, archived conversation is the subagent session that dry-ran the backfill.

The script writes every message as the live message the host holds (``_Script``), ingests it
through the row writer, and keeps the live copies: ``demo_live_messages`` hands the last of
them, plus two never-persisted inputs, to the engine step as its live window.
"""

from __future__ import annotations

import json
import os
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ctxview.assembly.live import stored_token_count
from ctxview.jsjson import js_stringify
from ctxview.samples.demo_texts import (
    HELM_GET_ALL_58,
    HELM_GET_ALL_SUMMARY,
    MIGRATION_0048,
    MIGRATION_0048_BATCHED,
    RUNBOOK,
)
from ctxview.samples.writer import (
    ASSISTANT_IDENTITY,
    Conversation,
    Ids,
    SessionDb,
    StoredMessage,
    epoch_ms,
)

# Bumped whenever the demo content changes, so a cached copy is rebuilt.
DEMO_FORMAT_VERSION = 1

_DEMO_DAY = datetime(2026, 3, 12)
_SUBAGENT_DRY_RUN = "agent:main:subagent:4f0c9a1e-6b2d-4c1a-9a63-2f51d7c0b8e4"
_SUBAGENT_FLAKE_HUNT = "agent:main:subagent:b7e2d915-03c8-4f6e-8d2a-61c4a9f0e357"


# --- live-message builders (the shapes OpenClaw keeps in memory) --------------------------


class _Script:
    """Writes one conversation as live messages and ingests each into the database."""

    def __init__(self, db: SessionDb, conv: Conversation, day: datetime, *, thinking_signatures: bool) -> None:
        self.db = db
        self.conv = conv
        self.day = day
        self.live: list[dict[str, Any]] = []  # every message, as the host held it
        self.stored: list[StoredMessage] = []
        self._signatures = thinking_signatures
        self._usage_rng = random.Random(f"usage:{conv.session_id}")

    def at(self, clock: str) -> datetime:
        hours, minutes, seconds = (int(x) for x in clock.split(":"))
        return self.day + timedelta(hours=hours, minutes=minutes, seconds=seconds)

    # blocks

    @staticmethod
    def text(text: str) -> dict[str, Any]:
        return {"type": "text", "text": text}

    def think(self, text: str) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "thinking", "thinking": text}
        if self._signatures:
            block["thinkingSignature"] = self.db.ids.base64ish(96)
        return block

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"type": "toolCall", "id": self.db.ids.tool_call(), "name": name, "arguments": arguments}

    # messages

    def _add(self, message: dict[str, Any], moment: datetime, **kwargs: Any) -> StoredMessage:
        self.live.append(message)
        stored = self.db.ingest(self.conv, message, moment, **kwargs)
        self.stored.append(stored)
        return stored

    def user(self, clock: str, text: str) -> StoredMessage:
        moment = self.at(clock)
        return self._add({"role": "user", "content": text, "timestamp": epoch_ms(moment)}, moment)

    def system(self, clock: str, text: str) -> StoredMessage:
        moment = self.at(clock)
        return self._add({"role": "system", "content": text, "timestamp": epoch_ms(moment)}, moment)

    def assistant(self, clock: str, *blocks: dict[str, Any]) -> StoredMessage:
        moment = self.at(clock)
        output = stored_token_count({"role": "assistant", "content": list(blocks), **ASSISTANT_IDENTITY})
        prompt = 18_000 + len(self.live) * 310 + self._usage_rng.randrange(0, 900)
        cached = (prompt // 1000) * 1000 - 2000 if len(self.live) > 2 else 0
        message = {
            "role": "assistant",
            "content": list(blocks),
            **ASSISTANT_IDENTITY,
            "usage": {
                "input": prompt - cached,
                "output": output,
                "cacheRead": cached,
                "cacheWrite": 0,
                "totalTokens": prompt + output,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "toolUse" if any(b["type"] == "toolCall" for b in blocks) else "stop",
            "timestamp": epoch_ms(moment),
        }
        return self._add(message, moment)

    def result(
        self,
        clock: str,
        call: dict[str, Any],
        text: str,
        *,
        is_error: bool = False,
        large_content: str | None = None,
    ) -> StoredMessage:
        moment = self.at(clock)
        message = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": call["name"],
            "content": [{"type": "text", "text": text}],
            "isError": is_error,
            "timestamp": epoch_ms(moment),
        }
        return self._add(message, moment, large_content=large_content)


# --- the conversations ----------------------------------------------------------------------


# The main conversation is written first, so it gets conversation_id 1 (tested).
DEMO_CONVERSATION_ID = 1


def build_demo(db: SessionDb) -> list[dict[str, Any]]:
    """Write the demo conversations; return the main conversation's live messages."""
    main = db.conversation(
        "agent:main:main",
        "Flaky prod deploy of billing-api 2.14",
        _DEMO_DAY + timedelta(hours=8, minutes=4, seconds=51),
    )
    s = _Script(db, main, _DEMO_DAY, thinking_signatures=True)

    # ---- 08:05-08:19: first look (leaf L1) ----
    l1 = [
        s.user(
            "08:05:12",
            "The billing-api deploy to prod-eu failed again this morning. `helm upgrade --atomic` timed out after "
            "5m and rolled back to 2.13.2. Third time this week, roughly one run in three, and only in prod. "
            "Can you help me figure out why?",
        ),
    ]
    events = s.call(
        "bash", {"command": "kubectl get events -n billing --kube-context prod-eu --sort-by=.lastTimestamp | tail -n 8"}
    )
    l1.append(
        s.assistant("08:05:40", s.text("Let's start with what the cluster saw during the failed upgrade."), events)
    )
    l1.append(
        s.result(
            "08:05:44",
            events,
            "LAST SEEN   TYPE      REASON              OBJECT                          MESSAGE\n"
            "21m         Normal    SuccessfulCreate    job/billing-api-migrate         Created pod: "
            "billing-api-migrate-7x2kq\n"
            "21m         Normal    Scheduled           pod/billing-api-migrate-7x2kq   Successfully assigned "
            "billing/billing-api-migrate-7x2kq to ip-10-42-3-17.eu-west-1.compute.internal\n"
            "21m         Normal    Pulled              pod/billing-api-migrate-7x2kq   Container image "
            '"registry.internal.example.com/billing/billing-api:2.14.0" already present on machine\n'
            "21m         Normal    Started             pod/billing-api-migrate-7x2kq   Started container migrate\n"
            "16m         Warning   DeadlineExceeded    job/billing-api-migrate         Job was active longer than "
            "specified deadline\n"
            "16m         Normal    SuccessfulDelete    job/billing-api-migrate         Deleted pod: "
            "billing-api-migrate-7x2kq",
        )
    )
    l1.append(
        s.assistant(
            "08:06:30",
            s.text(
                "The upgrade never reached the rollout. The pre-upgrade hook job `billing-api-migrate` ran past its "
                "300 s deadline and was killed, so Helm marked the release failed and `--atomic` rolled it back. The "
                "app pods were never replaced. So the question is why the migration is slow only in prod."
            ),
        )
    )
    l1.append(
        s.user("08:18:50", "Right, the hook runs `alembic upgrade head`. 2.14.0 ships two migrations, 0047 and 0048.")
    )

    # ---- 08:20-08:41: the blocking index (leaf L2) ----
    read_0047 = s.call("read", {"path": "migrations/versions/0047_invoice_currency_column.py"})
    l2 = [s.assistant("08:20:03", read_0047)]
    l2.append(
        s.result(
            "08:20:04",
            read_0047,
            '"""add invoices.currency\n\nRevision ID: 0047\nRevises: 0046\n"""\nfrom alembic import op\n'
            'import sqlalchemy as sa\n\nrevision = "0047"\ndown_revision = "0046"\n\n\n'
            "def upgrade() -> None:\n"
            '    op.add_column("invoices", sa.Column("currency", sa.CHAR(3), nullable=True))\n'
            '    op.create_index("ix_invoices_currency_issued_at", "invoices", ["currency", "issued_at"])\n\n\n'
            "def downgrade() -> None:\n"
            '    op.drop_index("ix_invoices_currency_issued_at", table_name="invoices")\n'
            '    op.drop_column("invoices", "currency")',
        )
    )
    l2.append(
        s.assistant(
            "08:21:10",
            s.text(
                "0047 builds `ix_invoices_currency_issued_at` with a plain CREATE INDEX. In prod `invoices` has about "
                "48M rows, so the build takes minutes and holds a SHARE lock that blocks every insert and update on "
                "the table. Staging has 1.2M rows and finishes in seconds, which is why staging never fails. 0048 "
                "then backfills `currency` in a single UPDATE. Both run inside the 300 s hook deadline."
            ),
        )
    )
    l2.append(
        s.user(
            "08:40:02",
            "Priya (DBA) confirms: during the last failed deploy the index build was queued behind the nightly "
            "reporting query, and writes to invoices piled up behind it. Checkout latency paged at the same time.",
        )
    )
    l2.append(
        s.assistant(
            "08:41:15",
            s.text(
                "That matches. Two fixes: (1) build the index with CREATE INDEX CONCURRENTLY in its own migration, "
                "outside the transaction, so it never blocks writes; (2) give migration connections a lock_timeout "
                "so they fail fast instead of queueing behind long queries. A longer hook deadline only makes sense "
                "once the migration itself is safe."
            ),
        )
    )

    # ---- 08:48-09:05: the flaky test, first look (leaf L3) ----
    l3 = [
        s.user(
            "08:48:30",
            "Before I change the migrations: CI on main has been flaky too. test_invoice_rollup "
            "fails maybe 1 in 8 runs. Is that related?",
        )
    ]
    runs = s.call("bash", {"command": "gh run list --workflow ci.yml --branch main --limit 6"})
    l3.append(s.assistant("08:48:55", runs))
    l3.append(
        s.result(
            "08:48:58",
            runs,
            "STATUS  TITLE                                WORKFLOW  BRANCH  EVENT  ID          ELAPSED  AGE\n"
            "✓       Bump sqlalchemy to 2.0.38            CI        main    push   8123401122  6m41s    2h\n"
            "X       Add invoice currency column (#476)   CI        main    push   8123377310  7m02s    5h\n"
            "✓       Retry webhook delivery on 502        CI        main    push   8123350987  6m38s    7h\n"
            "✓       Drop legacy /v1/refunds route        CI        main    push   8123299015  6m52s    1d\n"
            "X       Pin freezegun to 1.4.0               CI        main    push   8123201877  7m10s    1d\n"
            "✓       Add rollup metrics                   CI        main    push   8123188730  6m44s    1d",
        )
    )
    read_test = s.call("read", {"path": "tests/integration/test_rollup.py", "offset": 1, "limit": 40})
    l3.append(s.assistant("08:50:20", s.text("Both red runs failed in the same test. Let me read it."), read_test))
    l3.append(
        s.result(
            "08:50:21",
            read_test,
            "from datetime import date\n\nimport pytest\n\nfrom billing.rollup import rollup_day\n\n\n"
            '@pytest.mark.parametrize("currency", ["eur", "usd"])\n'
            "def test_invoice_rollup(db, invoice_factory, currency):\n"
            "    today = date.today()\n"
            "    invoice_factory(amount_cents=129900, currency=currency, issued_on=today)\n"
            "    invoice_factory(amount_cents=4500, currency=currency, issued_on=today)\n\n"
            "    rows = db.execute(rollup_day(today)).all()\n\n"
            "    assert rows[0].total_cents == 134400",
        )
    )
    l3.append(
        s.assistant(
            "09:05:44",
            s.text(
                "Not related to the deploy. Two things make this test flaky: the invoices are created with "
                "`date.today()` (the runner's local date) while the rollup groups by UTC day, so it fails when CI "
                "runs around midnight; and it asserts on `rows[0]` of a query without ORDER BY, so Postgres may "
                "return the two currencies in either order."
            ),
        )
    )

    # ---- 09:13-09:38: migrations reworked (leaf L4) ----
    l4 = [
        s.user(
            "09:13:02",
            "OK. Fix the migrations first. Split the index out of 0047 as you suggested and add the lock_timeout.",
        )
    ]
    edit_0047 = s.call(
        "edit",
        {
            "path": "migrations/versions/0047_invoice_currency_column.py",
            "oldText": '    op.create_index("ix_invoices_currency_issued_at", "invoices", ["currency", "issued_at"])\n',
            "newText": "",
        },
    )
    l4.append(s.assistant("09:14:10", edit_0047))
    l4.append(
        s.result(
            "09:14:11",
            edit_0047,
            "Successfully replaced 1 occurrence in migrations/versions/0047_invoice_currency_column.py",
        )
    )
    edit_env = s.call(
        "edit",
        {
            "path": "migrations/env.py",
            "oldText": "        context.configure(connection=connection, target_metadata=target_metadata)\n",
            "newText": "        connection.exec_driver_sql(\"SET lock_timeout = '5s'\")\n"
            "        connection.exec_driver_sql(\"SET statement_timeout = '60s'\")\n"
            "        context.configure(connection=connection, target_metadata=target_metadata)\n",
        },
    )
    l4.append(s.assistant("09:31:47", s.text("Index removed from 0047. Now the timeouts in env.py."), edit_env))
    l4.append(s.result("09:31:48", edit_env, "Successfully replaced 1 occurrence in migrations/env.py"))
    l4.append(
        s.assistant(
            "09:38:20",
            s.text(
                "Done: 0047 now only adds the nullable column (metadata-only on Postgres 15), the index moved to a new "
                "`0049_invoice_currency_index.py` that uses `postgresql_concurrently=True` inside "
                "`op.get_context().autocommit_block()`, and env.py sets lock_timeout = '5s' and "
                "statement_timeout = '60s' on the migration connection. I left 0048 (the backfill) unchanged."
            ),
        )
    )

    # ---- 09:41-09:57: staging (leaf L5) ----
    l5 = [s.user("09:41:05", "Deploy it to staging and run the upgrade three times in a row.")]
    staging = s.call(
        "bash",
        {
            "command": "for i in 1 2 3; do helm upgrade billing-api charts/billing-api -n billing "
            "--kube-context staging-eu -f values/staging.yaml --atomic --timeout 5m --wait "
            '>/dev/null && echo "run $i ok"; done',
            "timeout": 1200,
        },
    )
    l5.append(s.assistant("09:41:30", staging))
    l5.append(s.result("09:52:14", staging, "run 1 ok\nrun 2 ok\nrun 3 ok"))
    staging_log = s.call(
        "bash",
        {
            "command": "kubectl logs job/billing-api-migrate -n billing --kube-context "
            "staging-eu --timestamps | tail -n 5"
        },
    )
    l5.append(s.assistant("09:52:40", staging_log))
    l5.append(
        s.result(
            "09:52:43",
            staging_log,
            "2026-03-12T09:48:31.118Z INFO  [alembic.runtime.migration] Running upgrade 0046 -> 0047, add "
            "invoices.currency\n"
            "2026-03-12T09:48:31.164Z INFO  [alembic.runtime.migration] Running upgrade 0047 -> 0048, backfill "
            "invoices.currency from customers.billing_currency\n"
            "2026-03-12T09:48:35.402Z INFO  [alembic.runtime.migration] Running upgrade 0048 -> 0049, concurrent index "
            "on invoices(currency, issued_at)\n"
            "2026-03-12T09:49:09.377Z INFO  [alembic.runtime.migration] Done in 38.3s",
        )
    )
    l5.append(
        s.assistant(
            "09:57:02",
            s.text(
                "Staging passed 3/3. The migration job took 38 s: 4 s for the backfill (staging has 1.2M invoices) and "
                "34 s for the concurrent index build."
            ),
        )
    )

    # ---- 09:59-10:11: rollback target, platform notice (leaf L6) ----
    l6 = [
        s.user(
            "09:59:30",
            "The reviewer on PR #482 wants a rollback section in the runbook before we ship. "
            "What's the last good revision in prod?",
        )
    ]
    history_55 = s.call("bash", {"command": "helm history billing-api -n billing --kube-context prod-eu --max 3"})
    l6.append(s.assistant("09:59:52", history_55))
    l6.append(
        s.result(
            "09:59:55",
            history_55,
            "REVISION  UPDATED                   STATUS      CHART              APP VERSION  DESCRIPTION\n"
            "55        Mon Mar  9 14:12:03 2026  superseded  billing-api-3.8.0  2.13.2       Upgrade complete\n"
            '56        Thu Mar 12 07:44:19 2026  failed      billing-api-3.9.0  2.14.0       Upgrade "billing-api" '
            "failed: pre-upgrade hooks failed: timed out waiting for the condition\n"
            "57        Thu Mar 12 07:49:31 2026  deployed    billing-api-3.8.0  2.13.2       Rollback to 55",
        )
    )
    l6.append(
        s.assistant(
            "10:00:40",
            s.text(
                "Revision 57 (chart 3.8.0, app 2.13.2) is the last good release; "
                "`helm rollback billing-api 57 -n billing` "
                "restores it. Rolling back is safe for the schema because 0047 only adds a nullable column that 2.13.2 "
                "ignores."
            ),
        )
    )
    l6.append(
        s.user(
            "10:09:15",
            "Also, the platform team posted this in #infra-cn, what does it say?\n\n"
            "「本周五之前，所有服务的 Helm chart 都必须设置 activeDeadlineSeconds，"
            "并且数据库迁移任务不能超过十分钟。」",
        )
    )
    l6.append(
        s.assistant(
            "10:10:58",
            s.text(
                "It says: “By this Friday, every service's Helm chart must set activeDeadlineSeconds, and database "
                "migration jobs must not run longer than ten minutes.” Our hook already sets 300 s, so the chart "
                "complies; any long backfill will have to stay under ten minutes or move out of the migration job."
            ),
        )
    )

    # ---- 10:13-10:25: the flaky test fixed (leaf L7) ----
    l7 = [s.user("10:13:20", "Now fix test_invoice_rollup so it stops being flaky.")]
    edit_test = s.call(
        "edit",
        {
            "path": "tests/integration/test_rollup.py",
            "oldText": "    today = date.today()\n",
            "newText": "    today = date(2026, 3, 11)\n",
        },
    )
    l7.append(
        s.assistant(
            "10:14:02",
            s.text(
                "I'll pin the clock with freezegun at 23:59:30 UTC, build invoices for a fixed UTC day, and order the "
                "rollup rows by currency."
            ),
            edit_test,
        )
    )
    l7.append(s.result("10:14:03", edit_test, "Successfully replaced 1 occurrence in tests/integration/test_rollup.py"))
    rerun = s.call("bash", {"command": "pytest tests/integration/test_rollup.py -q --count=50 -p no:randomly"})
    l7.append(s.assistant("10:15:30", rerun))
    l7.append(s.result("10:16:02", rerun, "." * 76 + " [ 76%]\n" + "." * 24 + " [100%]\n100 passed in 31.08s"))
    l7.append(
        s.assistant(
            "10:16:40",
            s.text(
                "Fixed: the test freezes time at 2026-03-11T23:59:30Z, uses a fixed UTC day and the rollup query now "
                "orders by currency, issued_at. 50 repetitions of both parametrizations pass locally."
            ),
        )
    )

    # ---- 10:26-10:30: the prod attempt (leaf L8) ----
    l8 = [s.user("10:26:10", "Ship 2.14.1 to prod-eu. CHG-2291 is approved.")]
    l8.append(
        s.assistant(
            "10:26:45",
            s.text(
                "My kube context for prod-eu is read-only, so please run it yourself:\n\n"
                "`helm upgrade billing-api charts/billing-api -n billing --kube-context prod-eu -f values/prod-eu.yaml "
                "--set image.tag=2.14.1 --atomic --timeout 5m --wait`"
            ),
        )
    )
    l8.append(s.user("10:29:35", "Running it now."))

    # ---- compaction: leaves, then condensed depth 1 and 2 ----
    def ids(group: list[StoredMessage]) -> list[int]:
        return [m.message_id for m in group]

    leaf1 = db.leaf(
        main,
        ids(l1),
        (
            "billing-api 2.14.0 deploys to prod-eu fail intermittently (third time this week, about one run in three): "
            "`helm upgrade --atomic --timeout 5m` times out and rolls back to 2.13.2. Staging never fails.\n"
            "- 08:05 Kubernetes events: the pre-upgrade hook job billing-api-migrate exceeded its 300 s "
            "activeDeadlineSeconds (DeadlineExceeded); the app pods were never replaced.\n"
            "- 08:18 The hook runs `alembic upgrade head`; 2.14.0 ships migrations 0047 and 0048.\n"
            "Expand for details about: the full event list, pod and node names."
        ),
        s.at("09:40:12"),
    )
    leaf2 = db.leaf(
        main,
        ids(l2),
        (
            "- 0047 adds nullable invoices.currency and builds ix_invoices_currency_issued_at with a plain "
            "CREATE INDEX; "
            "prod invoices has ~48M rows (staging 1.2M), so the build takes minutes and blocks writes.\n"
            "- Priya (DBA): during the last failed deploy the index build queued behind the nightly reporting query; "
            "checkout latency paged.\n"
            "- Agreed: build the index CONCURRENTLY in its own migration; set lock_timeout for migrations; a longer "
            "hook deadline only after that.\n"
            "Expand for details about: the 0047 source, the lock analysis."
        ),
        s.at("09:40:17"),
    )
    leaf3 = db.leaf(
        main,
        ids(l3),
        (
            "- test_invoice_rollup (tests/integration/test_rollup.py) fails about 1 in 8 CI runs on main "
            "(red runs 8123377310, 8123201877); unrelated to the deploy.\n"
            "- Causes: invoices built with date.today() while the rollup groups by UTC day, and an assertion on "
            "rows[0] of a query without ORDER BY.\n"
            "Expand for details about: the CI run list, the test source."
        ),
        s.at("09:40:22"),
    )
    leaf4 = db.leaf(
        main,
        ids(l4),
        (
            "- 0047 now only adds the nullable column (metadata-only on Postgres 15).\n"
            "- New 0049_invoice_currency_index builds the index with postgresql_concurrently=True inside "
            "autocommit_block().\n"
            "- migrations/env.py sets lock_timeout = '5s' and statement_timeout = '60s' on the migration connection.\n"
            "- 0048 (the backfill, one UPDATE) is unchanged."
        ),
        s.at("09:40:27"),
    )
    d1a = db.condensed(
        main,
        [leaf1, leaf2],
        (
            "Prod-eu deploy failures of billing-api 2.14.0, 08:05-08:41 UTC: the pre-upgrade migration hook "
            "(alembic upgrade head, 300 s deadline) ran out of time because 0047 built an index on the 48M-row "
            "invoices table without CONCURRENTLY and queued behind the nightly reporting query. Staging is too "
            "small to show it. Agreed fix: a concurrent index in its own migration plus a lock_timeout."
        ),
        s.at("09:45:03"),
    )
    d1b = db.condensed(
        main,
        [leaf3, leaf4],
        (
            "08:48-09:38 UTC: the flaky test_invoice_rollup was diagnosed (date.today() against UTC grouping, no "
            "ORDER BY) and left for later. Migrations reworked: 0047 column only, 0049 concurrent index in an "
            "autocommit block, env.py lock_timeout 5s / statement_timeout 60s. The 0048 backfill is still a single "
            "UPDATE."
        ),
        s.at("09:45:08"),
    )
    d2 = db.condensed(
        main,
        [d1a, d1b],
        (
            "Morning of 2026-03-12: billing-api 2.14.0 kept failing its helm upgrade on the prod-eu kubernetes "
            "cluster because the "
            "pre-upgrade database migration hook exceeded 300 s. Root cause found so far: a blocking index build on "
            "invoices (48M rows). Migrations were reworked (column-only 0047, concurrent index 0049, lock_timeout); "
            "the single-statement 0048 backfill was left as is. A separate flaky CI test, test_invoice_rollup, was "
            "diagnosed but not yet fixed."
        ),
        s.at("10:12:30"),
    )
    leaf5 = db.leaf(
        main,
        ids(l5),
        (
            "- Staging-eu: three consecutive helm upgrades with the reworked migrations succeeded.\n"
            "- Migration job 38 s: the 0048 backfill took 4 s on staging's 1.2M invoices, the concurrent index 34 s."
        ),
        s.at("10:12:20"),
    )
    leaf6 = db.leaf(
        main,
        ids(l6),
        (
            "- PR #482 reviewer wants a rollback section in the runbook.\n"
            "- prod-eu helm history: revision 56 (2.14.0) failed in the pre-upgrade hook; revision 57 (chart 3.8.0, "
            "app 2.13.2) is the last good release, restored with `helm rollback billing-api 57 -n billing`. The "
            "schema stays compatible because 0047 only adds a nullable column.\n"
            "- Platform notice in #infra-cn: 「所有服务的 Helm chart 都必须设置 activeDeadlineSeconds，"
            "并且数据库迁移任务不能超过"
            "十分钟」 (by Friday; our hook sets 300 s)."
        ),
        s.at("10:12:25"),
    )
    d1c = db.condensed(
        main,
        [leaf5, leaf6],
        (
            "09:41-10:11 UTC: the reworked migrations passed three staging upgrades (38 s job). Rollback prep: "
            "revision 57 (app 2.13.2) is the prod-eu rollback target for helm rollback, and the schema change is "
            "backwards compatible. Platform rule: charts set activeDeadlineSeconds, migrations stay under ten "
            "minutes."
        ),
        s.at("10:31:40"),
    )
    leaf7 = db.leaf(
        main,
        ids(l7),
        (
            "- Flaky test fixed: test_invoice_rollup now freezes time at 2026-03-11T23:59:30Z (freezegun), builds "
            "invoices for a fixed UTC day and orders the rollup rows by currency, issued_at.\n"
            "- 50 repetitions of both parametrizations pass locally."
        ),
        s.at("10:31:45"),
    )
    leaf8 = db.leaf(
        main,
        ids(l8),
        (
            "- CHG-2291 approved for billing-api 2.14.1 in prod-eu.\n"
            "- The assistant's prod-eu kube context is read-only, so the user ran the upgrade at 10:29: "
            "`helm upgrade billing-api charts/billing-api -n billing --kube-context prod-eu -f values/prod-eu.yaml "
            "--set image.tag=2.14.1 --atomic --timeout 5m --wait`."
        ),
        s.at("10:31:50"),
    )
    main.context = [("summary", x.summary_id, x.created) for x in (d2, d1c, leaf7, leaf8)]

    # ---- 10:35 onwards: the raw context ----
    s.system(
        "10:35:00",
        "Deploy freeze: billing-api production deploys are blocked from 17:00 UTC today until Monday 08:00 UTC. "
        "Changes during the freeze need an approved change ticket and on-call sign-off (@mkaur).",
    )
    s.user(
        "10:36:12",
        "It failed again. Same symptom: helm upgrade timed out after 5m and --atomic rolled it back. Staging was "
        "green three times on the same kubernetes setup, so what is different this time?",
    )
    history = s.call("bash", {"command": "helm history billing-api -n billing --kube-context prod-eu --max 4"})
    s.assistant(
        "10:36:30",
        s.think(
            "Staging passed three times with the concurrent index, so 0049 is probably not what's slow in prod. "
            "The release history will say whether revision 58 failed in the hook or in the rollout; then the hook "
            "job's log will show which migration was running when the deadline hit."
        ),
        s.text("Let me check the release history first."),
        history,
    )
    s.result(
        "10:36:33",
        history,
        "REVISION  UPDATED                   STATUS      CHART              APP VERSION  DESCRIPTION\n"
        '56        Thu Mar 12 07:44:19 2026  failed      billing-api-3.9.0  2.14.0       Upgrade "billing-api" '
        "failed: pre-upgrade hooks failed: timed out waiting for the condition\n"
        "57        Thu Mar 12 07:49:31 2026  superseded  billing-api-3.8.0  2.13.2       Rollback to 55\n"
        '58        Thu Mar 12 10:29:40 2026  failed      billing-api-3.9.0  2.14.1       Upgrade "billing-api" '
        "failed: pre-upgrade hooks failed: timed out waiting for the condition\n"
        "59        Thu Mar 12 10:34:52 2026  deployed    billing-api-3.8.0  2.13.2       Rollback to 57",
    )
    job_log = s.call(
        "bash", {"command": "kubectl logs job/billing-api-migrate -n billing --kube-context prod-eu --timestamps"}
    )
    s.assistant(
        "10:36:51",
        s.text("Revision 58 failed in the pre-upgrade hook again, not in the rollout. Here is the hook job's log."),
        job_log,
    )
    s.result(
        "10:36:55",
        job_log,
        "2026-03-12T10:29:52.604Z INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\n"
        "2026-03-12T10:29:52.605Z INFO  [alembic.runtime.migration] Will assume transactional DDL.\n"
        "2026-03-12T10:29:52.671Z INFO  [alembic.runtime.migration] Running upgrade 0046 -> 0047, add "
        "invoices.currency\n"
        "2026-03-12T10:29:52.733Z INFO  [alembic.runtime.migration] Running upgrade 0047 -> 0048, backfill "
        "invoices.currency from customers.billing_currency\n"
        "2026-03-12T10:34:52.118Z ERROR [billing.migrations] received SIGTERM, aborting",
    )
    manifest = s.call("bash", {"command": "helm get all billing-api -n billing --kube-context prod-eu --revision 58"})
    s.assistant(
        "10:37:40",
        s.text(
            "This time the index is not the problem: 0047 took 60 ms and the job then sat in 0048, the backfill, "
            "for five minutes until it was killed. On staging that UPDATE touches 1.2M rows; in prod it is one "
            "transaction over 48M. Let me check how the hook is configured in the failed revision."
        ),
        manifest,
    )
    large_id = db.large_file(
        main,
        tool_name="bash",
        payload=HELM_GET_ALL_58,
        exploration_summary=HELM_GET_ALL_SUMMARY,
        created=s.at("10:37:44"),
    )
    s.result("10:37:44", manifest, HELM_GET_ALL_58, large_content=large_id)
    psql = s.call(
        "bash",
        {
            "command": "kubectl exec -n billing --kube-context prod-eu deploy/billing-api -- psql "
            '"$DATABASE_URL" -c "select pid, state, wait_event_type, now() - xact_start as age, '
            "left(query, 60) from pg_stat_activity where datname = 'billing' order by age desc "
            'limit 10"'
        },
    )
    s.assistant(
        "10:38:30",
        s.text(
            "The migrate Job is a pre-install,pre-upgrade hook with activeDeadlineSeconds 300 and backoffLimit 0, "
            "so any migration longer than five minutes fails the whole release. Let me see whether the aborted "
            "backfill left anything running on the database."
        ),
        psql,
    )
    s.user(
        "10:41:02",
        "I killed that command. Please don't open psql sessions on the prod primary, we're in the reporting "
        "window. Priya checked for us: the backfill UPDATE was rolled back when the pod got SIGTERM and no locks "
        "are left, but it spent most of the five minutes waiting behind an anti-wraparound autovacuum on invoices.",
    )
    read_0048 = s.call("read", {"path": "migrations/versions/0048_backfill_invoice_currency.py"})
    grep_hooks = s.call("grep", {"pattern": "helm.sh/hook", "path": "charts/billing-api/templates", "-n": True})
    s.assistant(
        "10:41:40",
        s.text(
            "Understood, no more sessions on the primary. So the single-transaction backfill is the real problem: "
            "it cannot finish in five minutes on 48M rows, and rolling it back wastes the work. Plan:\n"
            "1. rewrite 0048 as a batched backfill (10,000 rows per batch, one commit per batch, resumable);\n"
            "2. take it out of the pre-upgrade hook and run it as a separate post-upgrade Job, so the helm upgrade "
            "only waits for schema changes.\n"
            "Let me look at the migration and at how the hooks are wired in the chart."
        ),
        read_0048,
        grep_hooks,
    )
    s.result("10:41:43", read_0048, MIGRATION_0048)
    s.result(
        "10:41:43",
        grep_hooks,
        'charts/billing-api/templates/migrate-job.yaml:9:    "helm.sh/hook": pre-install,pre-upgrade\n'
        'charts/billing-api/templates/migrate-job.yaml:10:    "helm.sh/hook-weight": "-5"\n'
        'charts/billing-api/templates/migrate-job.yaml:11:    "helm.sh/hook-delete-policy": before-hook-creation\n'
        'charts/billing-api/templates/smoke-test.yaml:6:    "helm.sh/hook": test',
    )
    batch_write = s.call(
        "write", {"path": "migrations/versions/0048_backfill_invoice_currency.py", "content": MIGRATION_0048_BATCHED}
    )
    s.assistant(
        "10:43:05",
        s.text(
            "The chart has one hook (the migrate Job) plus the smoke test. First the migration: each batch picks "
            "10,000 invoices with `currency IS NULL`, updates them and commits, until a batch updates nothing."
        ),
        batch_write,
    )
    s.result(
        "10:43:06",
        batch_write,
        f"Successfully wrote {MIGRATION_0048_BATCHED.count(chr(10)) + 1} lines to "
        "migrations/versions/0048_backfill_invoice_currency.py",
    )
    s.user(
        "10:44:30",
        "From Sato-san in the Tokyo SRE channel. Can you translate it and tell me whether it changes the plan?\n\n"
        "本番環境へのデプロイは 19:00 JST（10:00 UTC）以降なら再開して大丈夫です。"
        "失敗した場合は helm rollback でリビジョン 57 に"
        "戻してください。マイグレーションを手動で実行するのはやめてください。",
    )
    s.assistant(
        "10:45:02",
        s.text(
            "Translation: “Deploying to production is fine again from 19:00 JST (10:00 UTC). If it fails, use helm "
            "rollback to go back to revision 57. Please don't run the migration by hand.”\n\n"
            "It doesn't change the plan: we are past 10:00 UTC, and the backfill will run as a Job from the chart, not "
            "by hand. One correction for the runbook: after this morning's rollback the current good revision is 59 "
            "(a rollback to 57, same chart and app version), so that is what a future rollback should target."
        ),
    )
    s.user(
        "10:46:40",
        "王磊 from the platform team replied in #infra-cn:\n\n"
        "「staging 的部署一直成功，是因为 staging 的数据库只有生产环境的四十分之一。"
        "迁移脚本必须分批执行，每批提交一次，而且中断以后要能继续。」\n\n"
        "Can you make sure the new backfill does that, and run its tests?",
    )
    pytest_1 = s.call("bash", {"command": "pytest tests/migrations/test_0048_backfill.py -q", "timeout": 120})
    s.assistant(
        "10:47:10",
        s.text(
            "He says staging deploys always succeed because the staging database is only 1/40 of production, and "
            "that the migration must run in batches, commit each batch, and be able to continue after an "
            "interruption. That is exactly the rewrite; running its tests now."
        ),
        pytest_1,
    )
    s.result(
        "10:47:29",
        pytest_1,
        "..F                                                                      [100%]\n"
        "=================================== FAILURES ===================================\n"
        "_______________ test_backfill_terminates_with_orphaned_invoices ________________\n\n"
        "db = <Connection postgresql://billing@localhost:5433/billing_test>\n\n"
        "    @pytest.mark.timeout(10)\n"
        "    def test_backfill_terminates_with_orphaned_invoices(db):\n"
        "        seed_invoices(db, 25_000, customer_currency=None, share=0.02)\n"
        '>       run_migration(db, "0048")\n'
        "E       Failed: Timeout >10.0s\n\n"
        "tests/migrations/test_0048_backfill.py:61: Failed\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/migrations/test_0048_backfill.py::test_backfill_terminates_with_orphaned_invoices - Failed: "
        "Timeout >10.0s\n"
        "1 failed, 2 passed in 12.41s",
        is_error=True,
    )
    keyset = s.call(
        "edit",
        {
            "path": "migrations/versions/0048_backfill_invoice_currency.py",
            "oldText": "WHERE i.currency IS NULL\n         LIMIT :batch",
            "newText": "WHERE i.id > :last_id\n         ORDER BY i.id\n         LIMIT :batch",
        },
    )
    s.assistant(
        "10:48:15",
        s.text(
            "The loop never ends when some customers have no billing_currency: those invoices stay NULL after the "
            "update, so every batch selects them again. Switching to keyset pagination over invoices.id (start at "
            "the first id with `currency IS NULL`, advance `last_id` each batch) fixes that and keeps the job "
            "resumable."
        ),
        keyset,
    )
    s.result(
        "10:48:16",
        keyset,
        "Successfully replaced 1 occurrence in migrations/versions/0048_backfill_invoice_currency.py",
    )
    pytest_2 = s.call("bash", {"command": "pytest tests/migrations/test_0048_backfill.py -q", "timeout": 120})
    s.assistant("10:48:40", pytest_2)
    s.result(
        "10:48:44",
        pytest_2,
        "...                                                                      [100%]\n3 passed in 3.02s",
    )
    s.user(
        "10:52:10",
        "Nice. Meanwhile CI on the PR is red again: test_invoice_rollup failed. I thought we fixed that flaky test?",
    )
    ci_log = s.call("bash", {"command": "gh run view 8124015530 --log-failed | tail -n 12"})
    s.assistant("10:52:31", ci_log)
    s.result(
        "10:52:36",
        ci_log,
        "test (3.12)  Run pytest  [gw3] FAILED tests/integration/test_rollup.py::test_invoice_rollup[eur]\n"
        "test (3.12)  Run pytest  ____________________ test_invoice_rollup[eur] ____________________\n"
        "test (3.12)  Run pytest  [gw3] linux -- Python 3.12.2 /opt/hostedtoolcache/Python/3.12.2/x64/bin/python\n"
        "test (3.12)  Run pytest  sqlalchemy.exc.IntegrityError: (psycopg.errors.UniqueViolation) duplicate key "
        'value violates unique constraint "invoices_number_key"\n'
        "test (3.12)  Run pytest  DETAIL:  Key (number)=(INV-000001) already exists.\n"
        "test (3.12)  Run pytest  tests/conftest.py:88: in invoice_factory\n"
        'test (3.12)  Run pytest      number=f"INV-{next(_invoice_numbers):06d}",\n'
        "test (3.12)  Run pytest  = 1 failed, 611 passed, 4 skipped in 212.37s (0:03:32) =",
    )
    conftest = s.call(
        "edit",
        {
            "path": "tests/conftest.py",
            "oldText": '        number=f"INV-{next(_invoice_numbers):06d}",\n',
            "newText": '        number=f"INV-{worker_id}-{next(_invoice_numbers):06d}",\n',
        },
    )
    s.assistant(
        "10:53:20",
        s.text(
            "A different flake this time. The invoice_factory fixture numbers invoices from a module-level "
            "counter, and with pytest-xdist each worker has its own counter but all workers share the test "
            "database, so two workers can both insert INV-000001. Prefixing the number with the xdist worker id "
            "makes it unique."
        ),
        conftest,
    )
    s.result("10:53:21", conftest, "Successfully replaced 1 occurrence in tests/conftest.py")
    s.user(
        "10:58:00",
        "Spawn two subagents: one to dry-run the batched backfill against last night's staging snapshot and report "
        "timings, and one to rerun the rollup test 200 times with random ordering. I'll draft the runbook meanwhile.",
    )
    spawn_dry_run = s.call(
        "sessions_spawn",
        {
            "label": "backfill-dry-run",
            "task": "Dry-run the batched backfill in migrations/versions/0048_backfill_invoice_currency.py against the "
            "staging snapshot restored from 2026-03-11 (database billing_snapshot on staging-eu). Report total "
            "time, batch count, max lock wait, and whether it resumes after a forced stop. Do not touch prod.",
        },
    )
    spawn_flake = s.call(
        "sessions_spawn",
        {
            "label": "rollup-flake-hunt",
            "task": "On branch fix/deploy-migration-race, run tests/integration/test_rollup.py 200 times with "
            "pytest-randomly (seeds 1-200) and -n 4, and report every failure with its seed.",
        },
    )
    s.assistant("10:58:20", spawn_dry_run, spawn_flake)
    s.result(
        "10:58:21",
        spawn_dry_run,
        js_stringify(
            {"status": "accepted", "childSessionKey": _SUBAGENT_DRY_RUN, "runId": "run_01HQ6ZK3M8D2W4T9YV7XN5B1CE"}
        ),
    )
    s.result(
        "10:58:21",
        spawn_flake,
        js_stringify(
            {"status": "accepted", "childSessionKey": _SUBAGENT_FLAKE_HUNT, "runId": "run_01HQ6ZK3QF0R7J2C6M9AH4WS8D"}
        ),
    )
    s.assistant(
        "10:58:40",
        s.text(
            "Both subagents are running: backfill-dry-run and rollup-flake-hunt. I'll fold their results in when they "
            "report."
        ),
    )
    s.user(
        "11:14:30",
        (
            f"[Inter-session message] sourceSession={_SUBAGENT_DRY_RUN} sourceTool=subagent_announce\n"
            "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\n"
            "[Internal task completion event]\n"
            "Child result: batched backfill dry-run on the staging snapshot of 2026-03-11 (48,213,377 invoices): "
            "4,822 batches of 10,000 rows, 11m42s in total, max lock wait 180 ms, no conflicts with autovacuum. "
            "Forced stop after batch 2,000; the second run resumed at batch 2,001 and finished cleanly. "
            "1,207 invoices of customers without billing_currency stay NULL, as expected.\n"
            "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"
        ),
    )
    s.assistant(
        "11:15:10",
        s.text(
            "The dry run confirms the design but also settles where the backfill runs: 11m42s is well over the 300 s "
            "hook deadline and over the platform team's ten-minute limit for migration jobs. So 0048 leaves the "
            "alembic chain: the pre-upgrade hook runs only schema migrations (0047, 0049), and the backfill becomes a "
            "post-upgrade Job (`billing-api-backfill`, activeDeadlineSeconds 1800) that resumes safely if it is "
            "interrupted."
        ),
    )
    s.user(
        "11:16:05",
        "Write the rollback section for the runbook: the exact helm rollback command, how to check the migration "
        "state, and what to do if the backfill job is half done.",
    )
    s.assistant("11:17:20", s.text(RUNBOOK))

    _build_dry_run_subagent(db)
    return s.live


def _build_dry_run_subagent(db: SessionDb) -> None:
    """The archived subagent session whose completion the main conversation received."""
    conv = db.conversation(
        _SUBAGENT_DRY_RUN,
        "backfill-dry-run",
        _DEMO_DAY + timedelta(hours=10, minutes=58, seconds=25),
        active=False,
        archived=_DEMO_DAY + timedelta(hours=11, minutes=14, seconds=40),
        archive_cause="subagent_ended",
    )
    s = _Script(db, conv, _DEMO_DAY, thinking_signatures=True)
    s.user(
        "10:58:25",
        (
            "[Subagent Task] Dry-run the batched backfill in migrations/versions/0048_backfill_invoice_currency.py "
            "against the staging snapshot restored from 2026-03-11 (database billing_snapshot on staging-eu). Report "
            "total time, batch count, max lock wait, and whether it resumes after a forced stop. Do not touch prod."
        ),
    )
    count = s.call(
        "bash", {"command": 'psql "$SNAPSHOT_URL" -c "select count(*) from invoices where currency is null"'}
    )
    s.assistant("10:58:41", s.text("Counting the rows the backfill has to touch."), count)
    s.result("10:58:49", count, "  count\n----------\n 48213377\n(1 row)")
    first = s.call(
        "bash",
        {
            "command": 'DATABASE_URL="$SNAPSHOT_URL" python -m billing.tools.run_backfill '
            "--revision 0048 --batch-size 10000 --stop-after 2000",
            "timeout": 2400,
        },
    )
    s.assistant("10:59:02", s.text("Running the first 2,000 batches, then stopping on purpose."), first)
    s.result(
        "11:03:55",
        first,
        "batch    500/4822  rows   5,000,000  elapsed 1m12s  lock_wait_max  96 ms\n"
        "batch  1,000/4822  rows  10,000,000  elapsed 2m25s  lock_wait_max 131 ms\n"
        "batch  1,500/4822  rows  15,000,000  elapsed 3m38s  lock_wait_max 131 ms\n"
        "batch  2,000/4822  rows  20,000,000  elapsed 4m51s  lock_wait_max 180 ms\n"
        "stopped after 2,000 batches (--stop-after)",
    )
    resume = s.call(
        "bash",
        {
            "command": 'DATABASE_URL="$SNAPSHOT_URL" python -m billing.tools.run_backfill '
            "--revision 0048 --batch-size 10000",
            "timeout": 2400,
        },
    )
    s.assistant("11:04:10", s.text("Resuming without cleanup."), resume)
    s.result(
        "11:11:01",
        resume,
        "resuming at invoice id 20,000,117 (batch 2,001)\n"
        "batch  3,000/4822  rows  30,000,000  elapsed 2m26s  lock_wait_max 122 ms\n"
        "batch  4,000/4822  rows  40,000,000  elapsed 4m52s  lock_wait_max 154 ms\n"
        "batch  4,822/4822  rows  48,212,170  elapsed 6m51s  lock_wait_max 154 ms\n"
        "done: 1,207 rows left NULL (customers without billing_currency)",
    )
    s.assistant(
        "11:14:35",
        s.text(
            "Batched backfill dry-run on the staging snapshot of 2026-03-11 (48,213,377 invoices): 4,822 batches of "
            "10,000 rows, 11m42s in total, max lock wait 180 ms, no conflicts with autovacuum. Forced stop after batch "
            "2,000; the second run resumed at batch 2,001 and finished cleanly. 1,207 invoices of customers without "
            "billing_currency stay NULL, as expected."
        ),
    )


def _demo_volatile_inputs() -> list[dict[str, Any]]:
    """Live inputs the host holds this turn that were never persisted."""
    announced = _DEMO_DAY + timedelta(hours=11, minutes=21, seconds=40)
    retried = _DEMO_DAY + timedelta(hours=11, minutes=22, seconds=5)
    return [
        {
            "role": "user",
            "content": (
                f"[Inter-session message] sourceSession={_SUBAGENT_FLAKE_HUNT} sourceTool=subagent_announce\n"
                "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\n"
                "[Internal task completion event]\n"
                "Child result: ran tests/integration/test_rollup.py 200 times with pytest-randomly seeds 1-200 and "
                "-n 4 on fix/deploy-migration-race: 200 passed, 0 failed. On main the same loop fails 9/200 "
                "(seeds 17, 42, 58, 91, 103, 127, 150, 176, 188), all with UniqueViolation on invoices_number_key.\n"
                "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"
            ),
            "timestamp": epoch_ms(announced),
        },
        {
            "role": "user",
            "content": (
                "[Retry after the previous model attempt failed or timed out]\n"
                "Before I start the prod deploy: double-check the helm rollback steps. Is revision 59 still the "
                "right rollback target, and does the database migration state need any manual step?"
            ),
            "timestamp": epoch_ms(retried),
        },
    ]


_DEMO_LIVE_TAIL = 4  # persisted messages at the end of the demo that the host still holds live


def demo_live_messages() -> list[dict[str, Any]]:
    """The host's live window for the demo's next turn.

    The last persisted messages exactly as the host holds them (so they are covered by the stored
    context), then a subagent announcement and a retry prompt that were never persisted.
    """
    db = SessionDb(Ids("demo"))
    live = build_demo(db)
    return [dict(m) for m in live[-_DEMO_LIVE_TAIL:]] + _demo_volatile_inputs()


def write_demo_live_json(path: str | os.PathLike[str]) -> Path:
    """Write :func:`demo_live_messages` as a 2-space indented JSON array (sample_sessions/demo-live.json)."""
    target = Path(path)
    target.write_text(json.dumps(demo_live_messages(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return target
