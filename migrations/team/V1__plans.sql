-- The team plan library. One row per (project, plan id): plan ids are derived from content, so
-- two members publishing the same plan make one row. Every change takes the project's next
-- revision under the project row's lock, so revisions commit in order and a member that has read
-- up to revision N has seen every change up to N.
CREATE TABLE refrain_projects (
    project TEXT PRIMARY KEY,
    rev BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE refrain_plans (
    project TEXT NOT NULL REFERENCES refrain_projects (project),
    id TEXT NOT NULL,
    bucket TEXT NOT NULL,
    action TEXT NOT NULL,
    kind TEXT NOT NULL,
    plan_version TEXT NOT NULL,
    normaliser INTEGER NOT NULL,
    extractor INTEGER,
    task TEXT NOT NULL,
    source TEXT NOT NULL,
    template JSONB NOT NULL,
    -- The plan as its publisher's refrain wrote it, as text: JSONB would reorder object keys, and
    -- the content id is over the exact serialisation.
    plan TEXT NOT NULL,
    successes BIGINT NOT NULL DEFAULT 0,
    failures BIGINT NOT NULL DEFAULT 0,
    failure_streak INTEGER NOT NULL DEFAULT 0,
    quarantined TEXT,
    published_by TEXT NOT NULL DEFAULT current_user,
    published_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    rev BIGINT NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX refrain_plans_by_rev ON refrain_plans (project, rev);
CREATE INDEX refrain_plans_by_bucket ON refrain_plans (project, bucket);

-- Operations already applied, by the id the member gave them when it queued them: a member that
-- sends an operation again (it crashed before noting the answer) changes nothing twice.
CREATE TABLE refrain_ops (
    op TEXT PRIMARY KEY,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE FUNCTION refrain_plans_notify() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('refrain_plans', NEW.project);
    RETURN NEW;
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER refrain_plans_changed AFTER INSERT OR UPDATE ON refrain_plans
    FOR EACH ROW EXECUTE FUNCTION refrain_plans_notify();
