"""Long members with context, appended to coding families whose members were all short.

Developers often explain why before saying what; these phrasings carry their own values like
every other member. `dsl.coding` appends EXTRA[id] to the family's members.
"""

from dsl import M

EXTRA = {
    6: [M("We're adding a cleanup mode to the CLI. The `prune` subcommand should get a boolean --dry-run flag so people can see what "
          "would be deleted first; wire it like the other cobra flags.", flag="--dry-run", cmd="prune")],
    8: [M("Reviewers keep pointing out clippy warnings by hand. Can we get a clippy job into lint.yml so CI catches them, "
          "running it with --all-targets and failing on warnings?", wf="lint.yml", args="--all-targets")],
    12: [M("cargo audit is flagging RUSTSEC-2024-0336 in our tree. The fix landed upstream, so please move rustls to 0.21.11 and make "
           "sure Cargo.lock actually picks it up before the release goes out.", crate="rustls", version="0.21.11")],
    13: [M("While cleaning up the build I noticed we still pull in `once_cell` 1.19.0 even though everything moved to std::sync::OnceLock. "
           "Drop it from Cargo.toml and make sure nothing breaks.", crate="once_cell", version="1.19.0")],
    14: [M("Support folks want machine-readable output from the CLI. Add a `--format-json` option to the click `report` command that "
           "prints the results as JSON instead of the table.", opt="--format-json", cmd="report")],
    15: [M("I'm replacing our hand-rolled retry loop with a library. Please add github.com/sethvargo/go-retry at v0.3.0 to go.mod and "
           "tidy the module so CI stays green.", module="github.com/sethvargo/go-retry", version="v0.3.0")],
    17: [M("The name `Manager` says nothing about what the class does, and new people keep asking. Rename it to SessionRegistry, "
           "file included, and fix every reference.", old="Manager", new="SessionRegistry")],
    19: [M("Staging and prod need different log verbosity. Introduce a LOG_LEVEL variable in the typed env config and document it in "
           ".env.example with info as the default.", var="LOG_LEVEL", default="info")],
    21: [M("Python 3.14 betas are out and a couple of users already run them. Let's add 3.14 to the test matrix in tests.yml so we "
           "see breakage early.", pyver="3.14", wf="tests.yml")],
    22: [M("We just had a bug from a shadowed variable in a callback. Enable the `no-shadow` rule in .eslintrc.cjs as an error and "
           "fix whatever it finds.", rule="no-shadow", cfg=".eslintrc.cjs")],
    26: [M("Product wants to archive teams without deleting them. Add an archived_at column (DateTime) to the teams table through an "
           "alembic migration, nullable so existing rows are fine.", column="archived_at", satype="DateTime", table="teams")],
    27: [M("People open issues asking how to install it. Write an Installation section in the README showing go install "
           "github.com/acme/logslice@latest and that it needs Go 1.23.", module="github.com/acme/logslice", gover="1.23")],
    28: [M("When an incident happens we can't tell which tenant a request belonged to. Could you add tenant_id to the fields the "
           "request logging middleware writes with logrus?", field="tenant_id")],
    30: [M("The new load balancer health-checks every backend and marks us down without a 200. Add a /readyz endpoint to the "
           "Django site that returns ok without touching the database.", path="/readyz")],
    31: [M("Embedded users complain about compile times because of image processing. Make the image crate optional behind a "
           "`images` feature so they can turn it off.", crate="image", feature="images")],
    32: [M("We're consolidating the API before 4.0. Deprecate fetch_all with a DeprecationWarning that points callers at "
           "iter_all, and say it goes away in 4.0.", func="fetch_all", new="iter_all", removal="4.0")],
    33: [M("Nobody updates our dependencies until something breaks. Set up Dependabot for bundler and docker, checking "
           "monthly so the PR noise stays manageable.", eco1="bundler", eco2="docker", interval="monthly")],
    34: [M("I keep typing the long gofumpt invocation by hand. Add a `fmt` target to the Makefile that runs gofumpt so it's just "
           "make fmt.", target="fmt", tool="gofumpt")],
    35: [M("QA signed off on the release candidate. Cut an annotated tag v3.1.0 on HEAD with the message 'Release 3.1.0' and push "
           "it to upstream so the release workflow kicks in.", tag="v3.1.0", msg="Release 3.1.0", remote="upstream")],
    36: [M("The dashboard needs to delete sessions it no longer shows. Add a DELETE /sessions/{session_id} endpoint to the FastAPI "
           "app returning a SessionDeleted model.", method="DELETE", path="/sessions/{session_id}", Model="SessionDeleted")],
    37: [M("The mobile app needs to mark notifications as read. Add a PATCH /api/notifications/:id route to the Express router; "
           "the handler can be a stub for now.", method="PATCH", path="/api/notifications/:id")],
    38: [M("Callers compare error strings to detect a full queue, which broke twice. Define a sentinel ErrQueueFull in the "
           "dispatch package and return it wrapped so they can use errors.Is.", err="ErrQueueFull", pkg="dispatch")],
    39: [M("We need to see which cache backends miss the most. Add a Prometheus CounterVec cache_misses_total with a backend label "
           "and increment it on every miss.", metric="cache_misses_total", label="backend")],
    40: [M("We're about to remove the old query helper in the next major. Make `runQuery` print a deprecation warning once, "
           "telling people to use `execute` instead.", old="runQuery", new="execute")],
    42: [M("`common` has become a dumping ground and the name hides what's in it. Rename the module to `serializers` and update "
           "every import across the package.", old="common", new="serializers")],
    43: [M("Design renamed the sidebar to a drawer in all the mockups. Rename the React component Sidebar to NavDrawer, file and "
           "imports, so the code matches what everyone says.", old="Sidebar", new="NavDrawer")],
    44: [M("The stable API review flagged the name as misleading. Rename the exported GetAllItems to ListItems (yes, it's breaking), "
           "fix every caller and note it in the changelog.", old="GetAllItems", new="ListItems")],
    46: [M("Customers on the LTS line hit the same crash we fixed on main in commit 7b3e2d9. Please backport it to release/3.4 "
           "with cherry-pick -x so the origin is recorded.", sha="7b3e2d9", release="release/3.4")],
    49: [M("Someone committed their local `.venv` and the repo doubled in size. Untrack it without deleting anyone's copy and add "
           "it to .gitignore so it doesn't happen again.", path=".venv")],
    51: [M("The new async closures we want need a newer compiler, so raise the MSRV to 1.85 in Cargo.toml's rust-version and in "
           "the CI job that checks it.", msrv="1.85")],
    52: [M("The 2018 edition is holding back some cleanups. Run cargo fix --edition and move the crate to edition 2021, then make "
           "sure clippy and the tests still pass.", prev="2018", edition="2021")],
    53: [M("Node 18 is end-of-life and our Docker image already uses 22. Bring .nvmrc, the engines field and CI up to node 22 so "
           "everything agrees.", old="18", node="22")],
    54: [M("We want range-over-func iterators, which need a newer toolchain. Bump go.mod from 1.22 to 1.23 and update the Go version "
           "in the CI workflow.", old="1.22", gover="1.23")],
    55: [M("I'm adding retries to the HTTP client and would rather not write them by hand. Add io.github.resilience4j:resilience4j-retry:2.2.0 "
           "to the Gradle build.", group="io.github.resilience4j", artifact="resilience4j-retry", version="2.2.0")],
    56: [M("We parse a lot of dates by hand and keep getting time zones wrong. Add pendulum (^3.0) as a dependency with poetry so "
           "we can switch over.", pkg="pendulum", ver="^3.0")],
    57: [M("We have zero frontend tests. Set up vitest 2.1 with an npm test script and one first test in src/format.test.ts so "
           "there's a pattern to copy.", ver="2.1", file="src/format.test.ts")],
    58: [M("A minor release of urllib3 broke our proxy support last week. Pin urllib3 to 2.2.2 in requirements.txt until we've "
           "tested the newer ones.", pkg="urllib3", ver="2.2.2")],
    60: [M("SplitHostPort in internal/net/addr.go has grown lots of edge cases (IPv6, missing port). Cover it with a table-driven "
           "Go test so we stop regressing.", Func="SplitHostPort", file="internal/net/addr.go")],
    61: [M("`parseDuration` in src/utils/time.ts has broken twice after refactors. Please write Jest unit tests for it covering the "
           "odd inputs before I touch it again.", func="parseDuration", mod="src/utils/time.ts")],
    62: [M("InvoiceService.applyDiscount has no tests and finance found a rounding bug. Write JUnit 5 tests for it, including the "
           "rounding cases, before we fix anything.", Class="InvoiceService", method="applyDiscount")],
    63: [M("Someone claims the new hashing is slower. Add a Criterion benchmark for `checksum` so we can compare before and after "
           "instead of guessing.", func="checksum")],
    64: [M("We found a case where pack_frame and unpack_frame didn't round-trip. Add a Hypothesis property test asserting that "
           "unpack_frame undoes pack_frame for arbitrary payloads.", func="pack_frame", inverse="unpack_frame")],
    65: [M("The output of `render_diff` changes subtly and nobody notices in review. Add an insta snapshot test for it in "
           "src/diff.rs so changes show up as snapshot diffs.", func="render_diff", file="src/diff.rs")],
    66: [M("Every CI run of checks.yml rebuilds all dependencies from scratch and takes twenty minutes. Cache ~/.cargo and target "
           "between runs to speed it up.", wf="checks.yml")],
    67: [M("A user reported a crash only on ARM Linux runners. Add ubuntu-24.04-arm to the matrix of the test job so we build "
           "and test there too.", extra="ubuntu-24.04-arm", job="test")],
    69: [M("Lint findings keep slipping through because only some of us run it locally. Add a golangci-lint workflow pinned to "
           "v1.62 that runs on every pull request.", version="v1.62")],
    71: [M("Our upstream APIs change without notice, so run the integration workflow (integration.yml) on a schedule as well: "
           "every day at 5:30, cron 30 5 * * *.", wf="integration.yml", cron="30 5 * * *")],
    72: [M("Formatting nits eat half of every review. Add ruff and ruff-format to .pre-commit-config.yaml at rev v0.8.4 so they "
           "run before each commit.", rev="v0.8.4")],
    73: [M("The security scan flagged that our image runs as root. Create a `worker` user with uid 2000 in the Dockerfile and "
           "switch to it before the entrypoint.", user="worker", uid="2000")],
    74: [M("Builds upload hundreds of megabytes of context because of local artifacts. Add a .dockerignore that leaves out "
           ".venv and __pycache__ so builds start faster.", e1=".venv", e2="__pycache__")],
    76: [M("Our image is over a gigabyte and most of it is build tooling we never use. Switch the base image to python:3.14-slim "
           "and check the app still starts.", ver="3.14")],
    77: [M("The scheduler keeps evicting the ingest pods under memory pressure. Give the ingest deployment requests of 500m CPU "
           "and 1Gi memory, with a matching memory limit.", deploy="ingest", cpu="500m", mem="1Gi")],
    78: [M("Some clusters need extra pod metadata for their mesh. Make podLabels configurable through values.yaml in the "
           "chart instead of hard-coding them in the template.", key="podLabels")],
    79: [M("Users want to sort teams by last activity. Add a lastActiveAt DateTime? field to the Team model and create the Prisma "
           "migration for it.", field="lastActiveAt", ptype="DateTime?", model="Team")],
    80: [M("The audit page times out because it filters on actor_id without an index. Add a golang-migrate migration that indexes "
           "audit_log(actor_id), with the down migration dropping it.", table="audit_log", column="actor_id")],
    81: [M("Orders need to remember which warehouse shipped them. Add a warehouse_code VARCHAR(16) column to orders in Flyway "
           "migration V21.", column="warehouse_code", sqltype="VARCHAR(16)", table="orders", ver="21")],
    82: [M("Speakers want to link their profiles. Add a website varchar column to the Speaker entity and generate the TypeORM "
           "migration for it.", column="website", ctype="varchar", Entity="Speaker")],
    84: [M("We keep finding leftover print statements in production code. Enable ruff's flake8-print rules (T20) in pyproject.toml "
           "and fix what it reports.", code="T20")],
    85: [M("Panics from indexing took down a worker last week. Set clippy's indexing_slicing lint to warn in the [lints] table of "
           "Cargo.toml so we at least see them.", lint="indexing_slicing", level="warn")],
    86: [M("We had another bug from an ignored error return. Enable the errcheck linter in .golangci.yml and fix whatever it "
           "flags before merging.", linter="errcheck")],
    87: [M("The billing package handles money and still has untyped functions everywhere. Turn on mypy strict mode for billing "
           "and fix the errors it reports.", pkg="billing")],
    88: [M("Half the team works on wide monitors and finds the wrapping too aggressive. Raise Prettier's printWidth from 80 to 100 "
           "and reformat everything in one commit.", old="80", width="100")],
    89: [M("We shipped a bug where a method was overridden by accident. Turn on noPropertyAccessFromIndexSignature in tsconfig.json "
           "and fix the places the compiler points at.", opt="noPropertyAccessFromIndexSignature")],
    92: [M("Ops complain the service prints nothing unless RUST_LOG is set. When it's unset, fall back to "
           "\"app=info,hyper=warn\" so the important lines show up.", filter="app=info,hyper=warn")],
    93: [M("The frontend needs to cancel running deploys. Add a DELETE /api/v1/deploys/{id} route to the axum router in "
           "backend/server/src/web.rs; a stub handler is fine for now.", method="DELETE", path="/api/v1/deploys/{id}")],
    95: [M("The admin UI needs to look up one invoice at a time. Add a GET endpoint /api/invoices/{id} to the controller that "
           "returns an InvoiceDto.", path="/api/invoices/{id}", Type="InvoiceDto")],
    96: [M("Internal tools should live under their own prefix. Create a /internal route group in the gin router and add GET "
           "/metrics-summary to it.", prefix="/internal", route="/metrics-summary", method="GET")],
    97: [M("Bots hammer our password reset form. Rate-limit /forgot-password with express-rate-limit to 3 requests per "
           "30 minutes per IP.", route="/forgot-password", max="3", mins="30")],
    98: [M("A slow partner API made our workers pile up because http.DefaultClient never times out. Use a client with a 15s "
           "timeout in partner/client.go instead.", dur="15s", file="partner/client.go")],
    102: [M("load_plugins crashes the CLI when a plugin file is malformed because of the unwrap() calls. Make it return a Result "
            "and propagate the errors with ? instead.", func="load_plugins")],
    103: [M("Contributors can't tell whether main is green without clicking around. Put the GitHub Actions badge for build.yml at "
            "the top of README.md.", wf="build.yml")],
    109: [M("The release notes are ready and the binaries built. Create the GitHub release v0.9.0 from the tag and attach "
            "everything in the out directory as assets.", tag="v0.9.0", dist="out")],
    110: [M("The changelog is final and CI is green, so let's ship. Publish 0.7.0 of the crate to crates.io, doing a dry run first "
            "to catch packaging problems.", version="0.7.0")],
    111: [M("The fix for the ESM import bug is merged. Please publish 3.2.1 to npm; it's a scoped package so it needs --access "
            "public.", version="3.2.1")],
    112: [M("The maintainers agreed to cut the release today. Build the sdist and wheel and publish 1.3.0 to PyPI with twine, "
            "checking the metadata first.", version="1.3.0")],
    113: [M("Users want to validate a config without running anything. Add a `validate` subcommand to the clap CLI that takes "
            "the file via --config.", name="validate", arg="config")],
    114: [M("Key rotation is done by hand with curl today. Add a cobra subcommand `rotate` under `keys` so operators can do it "
            "from the CLI.", name="rotate", parent="keys")],
    115: [M("mypy runs in CI but skips most of this code. Add type hints to src/worker/queue.py and make mypy pass on it so the "
            "checks mean something.", mod="src/worker/queue.py")],
    116: [M("The callback pyramid in lib/upload.js makes error handling nearly impossible to follow. Refactor it to async/await "
            "and keep the exported signature.", mod="lib/upload.js")],
    118: [M("The relative imports like ../../../lib are getting silly. Add an @shared alias pointing at src/shared in tsconfig "
            "paths and in Vite's resolve.alias.", alias="@shared", dir="src/shared")],
    119: [M("The partner's webhook consumer expects PascalCase keys, and renaming every field of WebhookPayload by hand is "
            "error-prone. Add rename_all = \"PascalCase\" to the struct instead.", Struct="WebhookPayload", case="PascalCase")],
    120: [M("Large uploads fail on slow links because of the fixed limit. Add an upload_timeout_secs option to the config with a "
            "serde default of 120.", name="upload_timeout_secs", default="120")],
    121: [M("We need to switch the cache off in some environments without redeploying. Add cache_enabled: bool = True to the "
            "pydantic Settings so CACHE_ENABLED controls it.", name="cache_enabled", ty="bool", default="True")],
    122: [M("Timeouts are hard-coded and ops want to tune them. Add a readTimeoutSeconds option (int, default 30) to the YAML "
            "config and use it in the server.", key="readTimeoutSeconds", ty="int", default="30")],
    128: [M("People run the tool with python -m and keep asking for a proper command. Add a `logslice` console script pointing "
            "at logslice.cli:main to pyproject.toml.", cmd="logslice", target="logslice.cli:main")],
    129: [M("The protocol types are duplicated between the server and the CLI. Create a new library crate crates/wire in the "
            "workspace so both can depend on it.", path="crates/wire")],
    130: [M("Kubernetes restarts our Node pods because there's nothing to probe. Add a /startupz route to the Express server that "
            "answers before the auth middleware.", path="/startupz")],
    131: [M("Our base images go stale for months. Add the docker-compose ecosystem to the existing dependabot.yml "
            "with a daily schedule, next to the npm entry.", eco="docker-compose", interval="daily")],
    132: [M("Contributors without pre-commit installed keep pushing unformatted code. Add a job to checks.yml that runs "
            "pre-commit on python 3.13 for every PR.", wf="checks.yml", py="3.13")],
    140: [M("The linter takes ages because it walks the generated protobuf code. Make ESLint ignore the src/gen folder, it's all "
            "produced by buf anyway.", pattern="src/gen")],
    142: [M("One of our workers hung for six hours on a stuck connection because requests has no default timeout. Put a 25 "
            "second timeout on every requests.get in people/client.py.", secs="25", verb="get")],
    143: [M("During the last incident a single slow query in CountByStatus blocked all the handlers. Give it a context timeout "
            "of 8 seconds so it fails fast instead.", secs="8", method="CountByStatus")],
    144: [M("Our CI scripts scrape the table output with awk and break on every column change. Add a --json flag that prints "
            "the Deployment structs in deployments with serde_json.", ty="Deployment", var="deployments")],
}
