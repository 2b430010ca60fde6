"""Long verbatim texts the demo conversation quotes.

Command output (``helm get all``), the two versions of a migration file and the runbook the
assistant writes; kept out of demo.py so the conversation script reads as a conversation.
"""

from __future__ import annotations

HELM_GET_ALL_58 = """NAME: billing-api
LAST DEPLOYED: Thu Mar 12 10:29:40 2026
NAMESPACE: billing
STATUS: failed
REVISION: 58
CHART: billing-api-3.9.0
APP VERSION: 2.14.1
USER-SUPPLIED VALUES:
image:
  tag: 2.14.1
ingress:
  host: billing.eu.internal.example.com
migrations:
  activeDeadlineSeconds: 300
  enabled: true
replicaCount: 4
resources:
  limits:
    memory: 1Gi
  requests:
    cpu: 500m
    memory: 768Mi

COMPUTED VALUES:
autoscaling:
  enabled: true
  maxReplicas: 12
  minReplicas: 4
  targetCPUUtilizationPercentage: 65
image:
  pullPolicy: IfNotPresent
  repository: registry.internal.example.com/billing/billing-api
  tag: 2.14.1
migrations:
  activeDeadlineSeconds: 300
  backoffLimit: 0
  command:
  - alembic
  - upgrade
  - head
  enabled: true
podDisruptionBudget:
  minAvailable: 3
readiness:
  path: /healthz/ready
  periodSeconds: 5
  failureThreshold: 3
replicaCount: 4

HOOKS:
---
# Source: billing-api/templates/migrate-job.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: billing-api-migrate
  labels:
    app.kubernetes.io/name: billing-api
    app.kubernetes.io/component: migrate
  annotations:
    "helm.sh/hook": pre-install,pre-upgrade
    "helm.sh/hook-weight": "-5"
    "helm.sh/hook-delete-policy": before-hook-creation
spec:
  backoffLimit: 0
  activeDeadlineSeconds: 300
  template:
    spec:
      restartPolicy: Never
      serviceAccountName: billing-api
      containers:
        - name: migrate
          image: "registry.internal.example.com/billing/billing-api:2.14.1"
          command: ["alembic", "upgrade", "head"]
          envFrom:
            - secretRef:
                name: billing-api-db
          resources:
            requests:
              cpu: 250m
              memory: 256Mi
---
# Source: billing-api/templates/smoke-test.yaml
apiVersion: v1
kind: Pod
metadata:
  name: billing-api-smoke-test
  annotations:
    "helm.sh/hook": test
spec:
  restartPolicy: Never
  containers:
    - name: smoke
      image: curlimages/curl:8.6.0
      args: ["--fail", "--max-time", "5", "http://billing-api:8080/healthz/ready"]
MANIFEST:
---
# Source: billing-api/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: billing-api
  labels:
    app.kubernetes.io/name: billing-api
    app.kubernetes.io/version: "2.14.1"
    helm.sh/chart: billing-api-3.9.0
---
# Source: billing-api/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: billing-api-config
data:
  LOG_LEVEL: info
  DB_POOL_SIZE: "20"
  DB_STATEMENT_TIMEOUT_MS: "15000"
  INVOICE_ROLLUP_CRON: "5 0 * * *"
---
# Source: billing-api/templates/pdb.yaml
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: billing-api
spec:
  minAvailable: 3
  selector:
    matchLabels:
      app.kubernetes.io/name: billing-api
---
# Source: billing-api/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: billing-api
spec:
  type: ClusterIP
  ports:
    - name: http
      port: 8080
      targetPort: http
  selector:
    app.kubernetes.io/name: billing-api
---
# Source: billing-api/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: billing-api
spec:
  replicas: 4
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 1
      maxUnavailable: 0
  selector:
    matchLabels:
      app.kubernetes.io/name: billing-api
  template:
    metadata:
      labels:
        app.kubernetes.io/name: billing-api
    spec:
      serviceAccountName: billing-api
      terminationGracePeriodSeconds: 45
      containers:
        - name: api
          image: "registry.internal.example.com/billing/billing-api:2.14.1"
          ports:
            - name: http
              containerPort: 8080
          readinessProbe:
            httpGet:
              path: /healthz/ready
              port: http
            periodSeconds: 5
            failureThreshold: 3
          livenessProbe:
            httpGet:
              path: /healthz/live
              port: http
            initialDelaySeconds: 20
            periodSeconds: 10
          envFrom:
            - configMapRef:
                name: billing-api-config
            - secretRef:
                name: billing-api-db
          resources:
            requests:
              cpu: 500m
              memory: 768Mi
            limits:
              memory: 1Gi
---
# Source: billing-api/templates/hpa.yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: billing-api
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: billing-api
  minReplicas: 4
  maxReplicas: 12
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: 65"""

HELM_GET_ALL_SUMMARY = (
    "helm get all output for release billing-api, revision 58 (status failed, chart billing-api-3.9.0, "
    "app 2.14.1), " + str(HELM_GET_ALL_58.count("\n") + 1) + " lines of YAML.\n"
    "Sections: USER-SUPPLIED VALUES, COMPUTED VALUES, HOOKS (migrate Job, smoke-test Pod), MANIFEST "
    "(ServiceAccount, ConfigMap, PodDisruptionBudget, Service, Deployment, HorizontalPodAutoscaler).\n"
    "Key facts: the migrate Job is a pre-install,pre-upgrade hook running `alembic upgrade head` with "
    "activeDeadlineSeconds 300 and backoffLimit 0; the Deployment rolls 4 replicas with maxUnavailable 0 "
    "and a /healthz/ready readiness probe."
)

MIGRATION_0048 = '''"""backfill invoices.currency from customers.billing_currency

Revision ID: 0048
Revises: 0047
"""
from alembic import op

revision = "0048"
down_revision = "0047"


def upgrade() -> None:
    op.execute(
        """
        UPDATE invoices AS i
           SET currency = c.billing_currency
          FROM customers AS c
         WHERE c.id = i.customer_id
           AND i.currency IS NULL
        """
    )


def downgrade() -> None:
    op.execute("UPDATE invoices SET currency = NULL")'''

MIGRATION_0048_BATCHED = '''"""backfill invoices.currency from customers.billing_currency, in batches

Revision ID: 0048
Revises: 0047
"""
import sqlalchemy as sa
from alembic import op

revision = "0048"
down_revision = "0047"

BATCH = 10_000
BACKFILL_BATCH = sa.text(
    """
    WITH batch AS (
        SELECT i.id, c.billing_currency
          FROM invoices AS i
          JOIN customers AS c ON c.id = i.customer_id
         WHERE i.currency IS NULL
         LIMIT :batch
    )
    UPDATE invoices SET currency = batch.billing_currency
      FROM batch
     WHERE invoices.id = batch.id
    """
)


def upgrade() -> None:
    conn = op.get_bind()
    with op.get_context().autocommit_block():
        while conn.execute(BACKFILL_BATCH, {"batch": BATCH}).rowcount:
            pass


def downgrade() -> None:
    pass  # the column is dropped by 0047's downgrade'''

RUNBOOK = """## Rollback: billing-api (prod-eu)

**Before you start:** the deploy freeze begins at 17:00 UTC; after that a rollback needs on-call sign-off (@mkaur) \
on the change ticket (CHG-2291).

1. **Find the target revision.**
   `helm history billing-api -n billing --kube-context prod-eu --max 5`
   Take the newest revision before the bad one whose APP VERSION is 2.13.2 and whose STATUS is `deployed` or \
`superseded`. Today that is **59** (itself a rollback to 57, same chart 3.8.0).
2. **Roll back.**
   `helm rollback billing-api 59 -n billing --kube-context prod-eu --wait --timeout 10m`
   The pre-upgrade hook does not run on rollback, so this takes about two minutes (4 replicas, maxUnavailable 0).
3. **Check the migration state** (read replica only, never the primary):
   `psql "$BILLING_RO_URL" -c "select version_num from alembic_version"`
   0047 (nullable column) and 0049 (concurrent index) are compatible with 2.13.2. Do **not** run \
`alembic downgrade`.
4. **If the backfill job is half done:**
   - leave the rows it already wrote; 2.13.2 never reads `invoices.currency`;
   - stop it: `kubectl delete job billing-api-backfill -n billing --kube-context prod-eu`;
   - re-run it after the next successful upgrade. It walks invoices by id from the first row with \
`currency IS NULL`, so it resumes without cleanup.
5. **Tell people:** post the old and new revision numbers in #billing-deploys and update CHG-2291."""
