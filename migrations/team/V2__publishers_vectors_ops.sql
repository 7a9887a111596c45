-- Which members' own counts a shared plan already holds. A member that publishes a plan the team
-- has already (another member stored the same plan) adds the successes and failures it counted
-- before sharing, once: its row here says it did. Members are named by a hash of their machine
-- and local store, never by a path.
CREATE TABLE refrain_publishers (
    project TEXT NOT NULL,
    id TEXT NOT NULL,
    member TEXT NOT NULL,
    PRIMARY KEY (project, id, member)
);

-- Applied operations older than the members' bound are pruned by age.
CREATE INDEX refrain_ops_by_time ON refrain_ops (applied_at);

-- Server-side search by meaning, only where the pgvector extension is installed: this function
-- creates the extension and the vectors table and index when it can, and answers false (never
-- fails) when it cannot. Every member calls it after migrating, so a server that gets pgvector
-- later has the table from the next member's start.
CREATE FUNCTION refrain_enable_vectors() RETURNS boolean AS $$
BEGIN
    IF to_regclass('refrain_vectors') IS NOT NULL THEN
        RETURN true;
    END IF;
    BEGIN
        CREATE EXTENSION IF NOT EXISTS vector;
        -- One vector per plan and embedding model (the model's name, its dimension 384).
        CREATE TABLE refrain_vectors (
            project TEXT NOT NULL,
            id TEXT NOT NULL,
            model TEXT NOT NULL,
            embedding vector(384) NOT NULL,
            PRIMARY KEY (project, id, model),
            FOREIGN KEY (project, id) REFERENCES refrain_plans (project, id) ON DELETE CASCADE
        );
        CREATE INDEX refrain_vectors_hnsw ON refrain_vectors USING hnsw (embedding vector_cosine_ops);
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'refrain: no server-side search (%)', SQLERRM;
        RETURN false;
    END;
    RETURN true;
END
$$ LANGUAGE plpgsql;

SELECT refrain_enable_vectors();
