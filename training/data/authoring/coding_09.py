"""Coding families 79-81, 84-87, 89: Prisma, golang-migrate and Flyway migrations; Ruff,
Clippy, golangci-lint, mypy and tsconfig strictness settings."""

import re

from dsl import B, E, G, GL, M, N, R, W, coding

PRISMA_DEFAULT = {"DateTime": " @default(now())", "Boolean": " @default(false)", "Int": " @default(0)"}
JAVA_TYPE = {"VARCHAR": "String", "TEXT": "String", "BOOLEAN": "Boolean", "INT": "Integer", "TIMESTAMP": "LocalDateTime", "BIGINT": "Long"}


def camel(name):
    parts = name.split("_")
    return parts[0] + "".join(p.title() for p in parts[1:])


def flyway(v):
    table = v["table"]
    entity = (table[:-1] if table.endswith("s") else table).title()
    base = re.match(r"[A-Z]+", v["sqltype"]).group(0)
    return {"Entity": entity, "jtype": JAVA_TYPE[base], "jfield": camel(v["column"])}


FAMILIES = [
    coding(
        79, "Add a field to a Prisma model with a migration", "typescript", "https://github.com/sillsdev/appbuilder-portal/pull/1024",
        root="/home/dev/appbuilder-portal",
        derive=lambda v: {"pline": v["field"] + " " + v["ptype"] + PRISMA_DEFAULT.get(v["ptype"], ""),
                          "mig": f"add_{v['model'].lower()}_{v['field'].lower()}"},
        todo=["Add «field» «ptype» to model «model» in prisma/schema.prisma", "Create and apply the migration «mig»",
              "Regenerate the client and typecheck"],
        calls=[R("prisma/schema.prisma"),
               E("prisma/schema.prisma", "model «model» {\n", "model «model» {\n  «pline»\n"),
               B("npx prisma migrate dev --name «mig»", "Create and apply the migration"),
               B("npx prisma generate && npx tsc --noEmit", "Regenerate the client and typecheck")],
        members=[
            M("Add a DateCreated DateTime field to the Project model with a prisma migration", field="DateCreated", ptype="DateTime", model="Project"),
            M("prisma: add `bio String?` to User and migrate", field="bio", ptype="String?", model="User"),
            M("new Boolean column isPinned on Post (prisma migrate dev)", ptype="Boolean", field="isPinned", model="Post"),
            M("Please add an Int field viewCount to Article in schema.prisma and create the migration", ptype="Int", field="viewCount", model="Article"),
            M("add `deletedAt DateTime?` to the Order model for soft deletes", field="deletedAt", ptype="DateTime?", model="Order"),
            M("prisma schema: Team needs a slug String field", model="Team", field="slug", ptype="String"),
        ],
        negatives=[
            N("remove the DateCreated field from the Project model with a migration", "removes the field",
              ["Delete DateCreated from model Project", "npx prisma migrate dev --name drop_project_datecreated"], field="DateCreated", model="Project"),
            N("add a DateCreated column to the Project entity with a TypeORM migration", "another ORM",
              ["@CreateDateColumn() dateCreated on the entity", "npx typeorm migration:generate", "migration:run"], model="Project"),
            N("add an index on Project.DateCreated in schema.prisma", "an index on an existing field",
              ["@@index([DateCreated]) in model Project", "npx prisma migrate dev --name project_datecreated_index"]),
            N("reset the development database with prisma", "resets data, no schema change", ["npx prisma migrate reset"]),
        ],
    ),
    coding(
        80, "Add an index with a golang-migrate SQL migration", "go", "https://github.com/pandodao/botastic/pull/33",
        root="/home/dev/botastic",
        defaults={"dir": "migrations"},
        derive=lambda v: {"idx": f"idx_{v['table']}_{v['column']}"},
        todo=["Create an up/down migration adding «idx» on «table»(«column»)", "Apply it", "Check the down migration reverses it"],
        calls=[B("migrate create -ext sql -dir «dir» -seq add_«idx»", "Create the migration files"),
               W("«dir»/000012_add_«idx».up.sql", "CREATE INDEX IF NOT EXISTS «idx» ON «table» («column»);\n"),
               W("«dir»/000012_add_«idx».down.sql", "DROP INDEX IF EXISTS «idx»;\n"),
               B('migrate -path «dir» -database "$DATABASE_URL" up', "Apply"),
               B('migrate -path «dir» -database "$DATABASE_URL" down 1 && migrate -path «dir» -database "$DATABASE_URL" up', "Check down and up")],
        members=[
            M("Add a migration to add an index on conversations(app_id)", table="conversations", column="app_id"),
            M("new migration: index messages.created_at", table="messages", column="created_at"),
            M("queries on orders by customer_id are slow, add an index via a migration", table="orders", column="customer_id"),
            M("golang-migrate: create index on users(email) with up/down files", table="users", column="email"),
            M("please add a db index for sessions.expires_at (migrations live in db/migrations)", table="sessions", column="expires_at", dir="db/migrations"),
            M("index events(user_id) in a new sql migration", table="events", column="user_id"),
        ],
        negatives=[
            N("add a unique constraint on users(email) in a migration", "uniqueness, not just an index",
              ["ALTER TABLE users ADD CONSTRAINT users_email_key UNIQUE (email);", "down: DROP CONSTRAINT"], table="users", column="email"),
            N("drop the index on conversations(app_id)", "removes the index",
              ["Migration with DROP INDEX idx_conversations_app_id", "down recreates it"], column="app_id"),
            N("add an app_id column to conversations", "a column, not an index",
              ["ALTER TABLE conversations ADD COLUMN app_id TEXT;"], column="app_id"),
            N("add the index with a GORM struct tag and AutoMigrate", "ORM automigration instead of SQL files",
              ["AppID string `gorm:\"index\"`", "db.AutoMigrate(&Conversation{})"]),
        ],
    ),
    coding(
        81, "Add a column with a Flyway migration", "java", "https://github.com/woowacourse-teams/2021-pick-git/issues/510",
        root="/home/dev/pick-git/backend",
        defaults={"ver": "7", "sqltype": "VARCHAR(255)"},
        derive=flyway,
        todo=["Write V«ver»__add_«column»_to_«table».sql adding «column» «sqltype»", "Map «column» on the «Entity» entity",
              "Let Flyway apply it and run the tests"],
        calls=[GL("src/main/resources/db/migration/V*.sql"),
               W("src/main/resources/db/migration/V«ver»__add_«column»_to_«table».sql", "ALTER TABLE «table» ADD COLUMN «column» «sqltype»;\n"),
               E("src/main/java/com/pickgit/«Entity».java", "    @Id\n", '    @Column(name = "«column»")\n    private «jtype» «jfield»;\n\n    @Id\n'),
               B("./gradlew flywayInfo", "Check the migration is pending"),
               B("./gradlew test", "Apply and test")],
        members=[
            M("Add the missing description column to posts in a Flyway migration V5", column="description", table="posts", ver="5"),
            M("flyway V12: add is_active BOOLEAN to members", ver="12", column="is_active", sqltype="BOOLEAN", table="members"),
            M("new migration adding a last_seen TIMESTAMP column to users", column="last_seen", sqltype="TIMESTAMP", table="users"),
            M("add stock INT to products with a flyway script (V3)", column="stock", sqltype="INT", table="products", ver="3"),
            M("Please write V21__add_nickname_to_accounts.sql (VARCHAR(50))", ver="21", column="nickname", table="accounts", sqltype="VARCHAR(50)"),
            M("flyway migration: orders.total_cents BIGINT", table="orders", column="total_cents", sqltype="BIGINT"),
        ],
        negatives=[
            N("edit V4__create_posts.sql to add the description column", "edits an applied migration instead of adding one (breaks checksums)",
              ["Don't: write a new versioned migration instead", "flyway repair only if the edit is unavoidable"], column="description"),
            N("add a description column to posts with a Liquibase changeset", "another migration tool",
              ["<addColumn tableName=\"posts\"><column name=\"description\" type=\"VARCHAR(255)\"/></addColumn>"], column="description", table="posts"),
            N("drop the description column from posts with Flyway", "removes the column",
              ["V8__drop_description_from_posts.sql: ALTER TABLE posts DROP COLUMN description;"], column="description", table="posts"),
            N("run flyway repair", "repairs the schema history, no schema change", ["./gradlew flywayRepair"]),
        ],
    ),
    coding(
        84, "Enable a Ruff rule set", "python", "https://github.com/craigerl/aprsd/pull/271",
        root="/home/dev/aprsd",
        todo=["Add \"«code»\" to [tool.ruff.lint] select in pyproject.toml", "Apply the automatic fixes for «code»", "Fix the rest and lint clean"],
        calls=[R("pyproject.toml"),
               E("pyproject.toml", 'select = ["E", "F"', 'select = ["E", "F", "«code»"'),
               B("ruff check --select «code» --fix .", "Apply the fixable ones"),
               B("ruff check .", "Lint everything")],
        members=[
            M("enable the ruff isort (I) ruleset in pyproject.toml", code="I"),
            M("turn on pyupgrade rules (UP) in ruff", code="UP"),
            M("ruff: add the bugbear rules B to select and fix findings", code="B"),
            M("Please enable flake8-simplify (SIM) in our ruff config", code="SIM"),
            M("add ruff's pydocstyle D rules", code="D"),
            M("can we select the RUF rules too?", code="RUF"),
        ],
        negatives=[
            N("disable the ruff isort rules (I)", "turns a rule set off", ['Remove "I" from select (or add it to ignore)'], code="I"),
            N("ignore rule E501 in ruff", "ignores one rule", ['ignore = ["E501"] under [tool.ruff.lint]'], code="E501"),
            N("add the isort hook to pre-commit", "another tool", ["Add the pycqa/isort hook to .pre-commit-config.yaml"]),
            N("enable the ruff I rules only for the tests directory", "scope: some files",
              ['[tool.ruff.lint.per-file-ignores] "src/**" = ["I"] with I selected'], code="I"),
        ],
    ),
    coding(
        85, "Set Clippy lint levels in Cargo.toml", "rust", "https://github.com/hasura/ndc-postgres/pull/299",
        root="/home/dev/ndc-postgres",
        todo=["Add «lint» = \"«level»\" under [lints.clippy] in Cargo.toml", "Run clippy and fix what it reports"],
        calls=[R("Cargo.toml"),
               E("Cargo.toml", "[dependencies]\n", '[lints.clippy]\n«lint» = "«level»"\n\n[dependencies]\n'),
               B("cargo clippy --all-targets", "See the new findings"),
               B("cargo clippy --all-targets -- -D warnings", "Lint clean")],
        members=[
            M("Enable all Clippy warnings in Cargo.toml (clippy all = warn)", lint="all", level="warn"),
            M("deny clippy::unwrap_used via the lints table in Cargo.toml", lint="unwrap_used", level="deny"),
            M("add [lints.clippy] pedantic = warn", lint="pedantic", level="warn"),
            M("Cargo.toml lints: forbid dbg_macro", level="forbid", lint="dbg_macro"),
            M("put `clippy::print_stdout` at deny in the manifest's lints section", lint="print_stdout", level="deny"),
            M("warn on clippy::todo through Cargo.toml", level="warn", lint="todo"),
        ],
        negatives=[
            N("allow clippy::too_many_arguments on one function", "a local allow",
              ["#[allow(clippy::too_many_arguments)] on that fn"], lint="too_many_arguments"),
            N("add #![deny(clippy::unwrap_used)] to lib.rs", "a crate attribute instead of the manifest",
              ["#![deny(clippy::unwrap_used)] at the top of src/lib.rs"], lint="unwrap_used"),
            N("set clippy's cognitive complexity threshold to 20 in clippy.toml", "lint configuration, not a level",
              ["cognitive-complexity-threshold = 20 in clippy.toml"]),
            N("forbid unsafe_code under [lints.rust]", "a rustc lint, not clippy", ['[lints.rust] unsafe_code = "forbid"'], lint="unsafe_code"),
        ],
    ),
    coding(
        86, "Enable a linter in golangci-lint", "go", "https://github.com/mikefarah/yq/pull/1010",
        root="/home/dev/yq",
        todo=["Enable «linter» in .golangci.yml", "Run golangci-lint and fix what it reports", "Run the tests"],
        calls=[R(".golangci.yml"),
               E(".golangci.yml", "linters:\n  enable:\n", "linters:\n  enable:\n    - «linter»\n"),
               B("golangci-lint run ./...", "See the findings"),
               B("golangci-lint run ./... && go test ./...", "Lint clean and test")],
        members=[
            M("enable errorlint linter", linter="errorlint"),
            M("turn on gosec in the golangci config and fix the findings", linter="gosec"),
            M("add revive to the enabled linters in .golangci.yml", linter="revive"),
            M("Please enable the `gocritic` linter", linter="gocritic"),
            M("golangci: enable bodyclose", linter="bodyclose"),
            M("can we lint with misspell too? enable it in .golangci.yml", linter="misspell"),
        ],
        negatives=[
            N("disable errorlint in .golangci.yml", "turns it off", ["Move errorlint to linters.disable"], linter="errorlint"),
            N("exclude errorlint findings in _test.go files", "an exclusion rule",
              ["issues.exclude-rules: - path: _test\\.go linters: [errorlint]"], linter="errorlint"),
            N("upgrade golangci-lint to v1.61", "a version bump", ["version: v1.61 in the workflow", "Fix new findings"]),
            N("enable eslint's no-unused-vars rule", "another language's linter", ['"no-unused-vars": "error" in the eslint config']),
        ],
    ),
    coding(
        87, "Turn on mypy strict mode", "python", "https://github.com/LouisChrist/pyblu/pull/77",
        root="/home/dev/pyblu",
        todo=["Set strict = true under [tool.mypy] for «pkg»", "Run mypy and fix the errors", "Run the tests"],
        calls=[R("pyproject.toml"),
               E("pyproject.toml", "[tool.mypy]\n", '[tool.mypy]\nstrict = true\nfiles = ["«pkg»"]\n'),
               B("mypy «pkg»", "List the errors"),
               B("python -m pytest -q", "Run the tests after the fixes")],
        members=[
            M("Enable strict mode for mypy on pyblu", pkg="pyblu"),
            M("mypy --strict for the api package", pkg="api"),
            M("make mypy strict in pyproject and fix the enrich types", pkg="enrich"),
            M("Please turn on strict mypy for src/toisto", pkg="src/toisto"),
            M("run mypy in strict mode over deptry and clean up", pkg="deptry"),
            M("strict type checking with mypy for the webviz_config package", pkg="webviz_config"),
        ],
        negatives=[
            N("disable mypy strict mode", "turns it off", ["strict = false (or remove it)"]),
            N("enable strict mode in pyright", "another type checker", ['"typeCheckingMode": "strict" in pyrightconfig.json']),
            N("tell mypy to ignore missing imports for requests", "an override", ['[[tool.mypy.overrides]] module = "requests.*" ignore_missing_imports = true']),
            N("enable TypeScript strict mode in tsconfig.json", "another language", ['"strict": true in compilerOptions']),
        ],
    ),
    coding(
        89, "Turn on a TypeScript compiler check", "typescript", "https://github.com/digidem/comapeo-mobile/pull/222",
        root="/home/dev/comapeo-mobile",
        todo=["Set \"«opt»\": true in tsconfig.json", "Fix the new type errors", "Run the tests"],
        calls=[R("tsconfig.json"),
               E("tsconfig.json", '"compilerOptions": {\n', '"compilerOptions": {\n    "«opt»": true,\n'),
               B("npx tsc --noEmit", "List the new errors"),
               B("npm test", "Run the tests after the fixes")],
        members=[
            M("use the noUncheckedIndexedAccess option in TSConfig", opt="noUncheckedIndexedAccess"),
            M("turn on strict in tsconfig.json", opt="strict"),
            M("enable exactOptionalPropertyTypes and fix the fallout", opt="exactOptionalPropertyTypes"),
            M("Please set noImplicitOverride to true in our tsconfig", opt="noImplicitOverride"),
            M("tsconfig: noUnusedLocals on", opt="noUnusedLocals"),
            M("can we enable noFallthroughCasesInSwitch?", opt="noFallthroughCasesInSwitch"),
        ],
        negatives=[
            N("disable noUncheckedIndexedAccess in tsconfig", "turns it off", ['"noUncheckedIndexedAccess": false'], opt="noUncheckedIndexedAccess"),
            N("enable noUncheckedIndexedAccess only in tsconfig.test.json", "scope: the test config",
              ['"noUncheckedIndexedAccess": true in tsconfig.test.json only'], opt="noUncheckedIndexedAccess"),
            N("enable the @typescript-eslint/no-non-null-assertion rule", "a lint rule, not a compiler option",
              ['"@typescript-eslint/no-non-null-assertion": "error" in the eslint config']),
            N("change the tsconfig target to ES2022", "another option, with a value", ['"target": "ES2022"', "Check the runtime supports it"]),
        ],
    ),
]
