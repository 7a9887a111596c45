"""Coding families 117-121, 124-126: translation keys, path aliases, serde renames, config
options (Rust, pydantic, Spring), DRF pagination, HTTP retries with backoff."""

import re

from dsl import B, E, G, GL, M, N, R, W, coding


def snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def camel_kebab(name):
    parts = name.split("-")
    return parts[0] + "".join(p.title() for p in parts[1:])


def rust_default(v):
    d = v["default"]
    return {"code_default": f'String::from("{d}")' if v["ty"] == "String" else d}


def pydantic(v):
    d = v["default"]
    py = f'"{d}"' if v["ty"] == "str" and not d.startswith('"') else d
    return {"pyval": py, "ENV": v["name"].upper(), "envval": d.strip('"')}


def spring_prop(v):
    d = v["default"]
    return {"field": camel_kebab(v["prop"]), "jdefault": f'"{d}"' if v["jtype"] == "String" else d}


FAMILIES = [
    coding(
        117, "Add a translation key to the locale files", "typescript", "https://github.com/hcengineering/platform/pull/8824",
        root="/home/dev/platform/packages/ui",
        todo=["Add «key» to src/locales/en.json («en»)", "Add «key» to src/locales/fr.json («fr»)", "Check every locale has the same keys"],
        calls=[R("src/locales/en.json"),
               E("src/locales/en.json", "{\n", '{\n  "«key»": "«en»",\n'),
               E("src/locales/fr.json", "{\n", '{\n  "«key»": "«fr»",\n'),
               B("npm run i18n:check", "Compare the locale keys")],
        members=[
            M("add the missing key sidebar.newConnection to the locales: en 'New connection', fr 'Nouvelle connexion'",
              key="sidebar.newConnection", en="New connection", fr="Nouvelle connexion"),
            M("i18n: add app.closeTitle = 'Close app' (fr: 'Fermer l'application')", key="app.closeTitle", en="Close app", fr="Fermer l'application"),
            M("we need a translation for terminal.export: Export / Exporter", key="terminal.export", en="Export", fr="Exporter"),
            M("Please add errors.network with 'Network error' and the French 'Erreur réseau'", key="errors.network", en="Network error", fr="Erreur réseau"),
            M("add settings.darkMode (Dark mode / Mode sombre) to en.json and fr.json", key="settings.darkMode", en="Dark mode", fr="Mode sombre"),
            M("new i18n string button.retry: Retry, fr Réessayer", key="button.retry", en="Retry", fr="Réessayer"),
        ],
        negatives=[
            N("remove the unused key sidebar.newConnection from all locales", "removes a key",
              ["Delete sidebar.newConnection from every locale file"], key="sidebar.newConnection"),
            N("add a German locale (de.json)", "a new locale, not a new key", ["Copy en.json to de.json and translate", "Register de in the i18n setup"]),
            N("rename the key sidebar.newConnection to sidebar.addConnection", "renames a key",
              ["Rename it in every locale", "Update the t() calls"], key="sidebar.newConnection"),
            N("translate the README into French", "documentation, not UI strings", ["Write README.fr.md", "Link it from the README"]),
        ],
    ),
    coding(
        118, "Add an import path alias to tsconfig and Vite", "typescript", "https://github.com/fruitriin/mfm-renderer/pull/46",
        root="/home/dev/mfm-renderer",
        todo=["Map «alias»/* to «dir»/* under paths in tsconfig.json", "Add resolve.alias «alias» -> «dir» in vite.config.ts", "Typecheck and build"],
        calls=[R("tsconfig.json"),
               E("tsconfig.json", '"compilerOptions": {\n', '"compilerOptions": {\n    "baseUrl": ".",\n    "paths": { "«alias»/*": ["«dir»/*"] },\n'),
               E("vite.config.ts", "export default defineConfig({\n",
                 'export default defineConfig({\n  resolve: { alias: { "«alias»": fileURLToPath(new URL("./«dir»", import.meta.url)) } },\n'),
               B("npx tsc --noEmit && npx vite build", "Typecheck and build")],
        members=[
            M("add an @ alias for src in tsconfig and Vite", alias="@", dir="src"),
            M("set up the ~ path alias pointing at src (tsconfig paths + vite resolve.alias)", alias="~", dir="src"),
            M("alias @components to src/components in both tsconfig and vite", alias="@components", dir="src/components"),
            M("Please add `@lib` -> `src/lib` as an import alias", alias="@lib", dir="src/lib"),
            M("configure #app as an alias for app/ in the vite config and tsconfig", alias="#app", dir="app"),
            M("path alias @ui => packages/ui/src", alias="@ui", dir="packages/ui/src"),
        ],
        negatives=[
            N("remove the @ alias and go back to relative imports", "the opposite", ["Delete paths and resolve.alias", "Rewrite @/ imports as relative paths"], alias="@"),
            N("add the @ alias to webpack's resolve.alias", "another bundler", ["resolve: { alias: { \"@\": path.resolve(__dirname, \"src\") } } in webpack.config.js"], alias="@"),
            N("add a #utils subpath import in package.json", "Node subpath imports instead of an alias",
              ['"imports": { "#utils/*": "./src/utils/*" } in package.json']),
            N("map @ to src in Jest's moduleNameMapper", "the test runner's config", ['moduleNameMapper: { "^@/(.*)$": "<rootDir>/src/$1" }'], alias="@"),
        ],
    ),
    coding(
        119, "Rename all fields of a struct with serde rename_all", "rust", "https://github.com/calavera/aws-lambda-events/pull/56",
        root="/home/dev/aws-lambda-events",
        defaults={"file": "src/event/mod.rs"},
        derive=lambda v: {"snake": snake(v["Struct"])},
        todo=["Put #[serde(rename_all = \"«case»\")] on «Struct»", "Drop the per-field renames it makes redundant", "Run the «snake» serialization tests"],
        calls=[G("struct «Struct»", "src"),
               R("«file»"),
               E("«file»", "pub struct «Struct» {", '#[serde(rename_all = "«case»")]\npub struct «Struct» {'),
               B("cargo test «snake»", "Run the round-trip tests")],
        members=[
            M("Serialize all fields of ApiGatewayProxyRequest as camelCase", Struct="ApiGatewayProxyRequest", case="camelCase"),
            M('add rename_all = "kebab-case" to the Config struct', case="kebab-case", Struct="Config"),
            M("use SCREAMING_SNAKE_CASE for the EnvConfig fields", case="SCREAMING_SNAKE_CASE", Struct="EnvConfig"),
            M('Please put #[serde(rename_all = "PascalCase")] on S3EventRecord', case="PascalCase", Struct="S3EventRecord"),
            M("camelCase all fields of UserResponse instead of renaming each one", case="camelCase", Struct="UserResponse"),
            M("the Settings struct should deserialize kebab-case keys", Struct="Settings", case="kebab-case"),
        ],
        negatives=[
            N("rename just the field file_url of UploadResponse to fileUrl", "one field only", ['#[serde(rename = "fileUrl")] on file_url']),
            N("serialize the variants of the Status enum in lowercase", "enum variants, not struct fields", ['#[serde(rename_all = "lowercase")] on enum Status']),
            N("skip None fields when serializing ApiGatewayProxyRequest", "skips fields instead of renaming",
              ['#[serde(skip_serializing_if = "Option::is_none")] on the Option fields'], Struct="ApiGatewayProxyRequest"),
            N("make the Python dataclass serialize its fields as camelCase", "another language", ["pydantic alias_generator=to_camel", "model_dump(by_alias=True)"]),
        ],
    ),
    coding(
        120, "Add a config option with a serde default", "rust", "https://github.com/readysettech/proxysql_scheduler/pull/37",
        root="/home/dev/proxysql_scheduler",
        defaults={"ty": "u64"},
        derive=rust_default,
        todo=["Add «name»: «ty» to Config with #[serde(default = \"default_«name»\")]", "Write default_«name»() returning «default»",
              "Document «name» in the example config", "Test a config that omits it"],
        calls=[R("src/config.rs"),
               E("src/config.rs", "pub struct Config {\n", 'pub struct Config {\n    #[serde(default = "default_«name»")]\n    pub «name»: «ty»,\n'),
               E("src/config.rs", "\n#[cfg(test)]\n", "\nfn default_«name»() -> «ty» {\n    «code_default»\n}\n\n#[cfg(test)]\n"),
               E("config.toml.example", "[scheduler]\n", "[scheduler]\n# «name» = «default»\n"),
               B("cargo test config", "Run the config tests")],
        members=[
            M("add a number_of_queries option to the config, default 10", name="number_of_queries", default="10"),
            M("new config field lag_threshold (u32), defaults to 30 when missing", name="lag_threshold", ty="u32", default="30"),
            M("config: add `retry_interval_ms` with a default of 500", name="retry_interval_ms", default="500"),
            M("Please add an optional `dry_run: bool` setting, default false", name="dry_run", ty="bool", default="false"),
            M("add max_replicas to Config; if absent use 3", name="max_replicas", default="3"),
            M("support a `log_level` String option defaulting to info", name="log_level", ty="String", default="info"),
        ],
        negatives=[
            N("make number_of_queries a required config field", "required: no default", ["Remove the serde default", "Error when it is missing"], name="number_of_queries"),
            N("add a --number-of-queries command-line flag", "a CLI flag instead of a config key", ["#[arg(long)] number_of_queries: Option<u64>"]),
            N("remove the number_of_queries option", "removes it", ["Delete the field and its default fn", "Update the example config"], name="number_of_queries"),
            N("read number_of_queries from the NUMBER_OF_QUERIES environment variable", "an environment variable",
              ['std::env::var("NUMBER_OF_QUERIES")', "parse with a fallback"], name="number_of_queries"),
        ],
    ),
    coding(
        121, "Add a setting to a pydantic BaseSettings class", "python", "https://github.com/KrijnvanderBurg/Samara/pull/56",
        root="/home/dev/Samara",
        todo=["Add «name»: «ty» = «pyval» to Settings", "Document «ENV» in .env.example", "Check it reads «ENV» from the environment", "Run the tests"],
        derive=pydantic,
        calls=[R("app/settings.py"),
               E("app/settings.py", "class Settings(BaseSettings):\n", "class Settings(BaseSettings):\n    «name»: «ty» = «pyval»\n"),
               E(".env.example", "# settings\n", "# settings\n«ENV»=«envval»\n"),
               B("«ENV»=«envval» python -c 'from app.settings import Settings; print(Settings().«name»)'", "Read it from the environment"),
               B("python -m pytest -q", "Run the tests")],
        members=[
            M('add a log_level setting (str, default "INFO") to the pydantic Settings', name="log_level", ty="str", default='"INFO"'),
            M("settings: request_timeout: float = 10.0, from REQUEST_TIMEOUT", name="request_timeout", ty="float", default="10.0"),
            M("new BaseSettings field max_workers (int) defaulting to 4", name="max_workers", ty="int", default="4"),
            M("Please add `debug: bool = False` to our Settings class", name="debug", ty="bool", default="False"),
            M("redis_url str setting with default redis://localhost:6379/0", name="redis_url", ty="str", default="redis://localhost:6379/0"),
            M("add cache_ttl_seconds (int, 300 by default) to settings", name="cache_ttl_seconds", ty="int", default="300"),
        ],
        negatives=[
            N("remove the log_level setting", "removes it", ["Delete log_level from Settings and .env.example"], name="log_level"),
            N("add LOG_LEVEL to the Django settings.py", "another framework", ['LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO")']),
            N("add a log_level field to the request model", "a request model, not settings", ["log_level: str | None = None on the pydantic request model"], name="log_level"),
            N("make log_level required with no default", "required", ["log_level: str with no default; startup fails if unset"], name="log_level"),
        ],
    ),
    coding(
        124, "Add a property to a Spring @ConfigurationProperties class", "java", "https://github.com/jferrater/opa-data-filter-spring-boot-starter/pull/28",
        root="/home/dev/opa-data-filter-spring-boot-starter",
        defaults={"prefix": "opa", "Props": "OpaProperties"},
        derive=spring_prop,
        todo=["Add «field» («jtype», default «default») to «Props»", "Set «prefix».«prop» in application.yml", "Run the tests"],
        calls=[R("src/main/java/com/example/config/«Props».java"),
               E("src/main/java/com/example/config/«Props».java", "public class «Props» {\n",
                 "public class «Props» {\n\n    /** «prefix».«prop» */\n    private «jtype» «field» = «jdefault»;\n"),
               E("src/main/resources/application.yml", "«prefix»:\n", "«prefix»:\n  «prop»: «default»\n"),
               B("mvn -q test", "Run the tests")],
        members=[
            M("add opa.max-retries (int, default 3) to OpaProperties", prop="max-retries", jtype="int", default="3"),
            M("new config property opa.enabled (boolean, default true)", prop="enabled", jtype="boolean", default="true"),
            M("OpaProperties needs a policy-path String, default /v1/data/authz", prop="policy-path", jtype="String", default="/v1/data/authz"),
            M("Please add app.page-size (int, default 50) to AppProperties", prefix="app", prop="page-size", jtype="int", default="50", Props="AppProperties"),
            M("add mail.from-address as a String property in MailProperties, default noreply@example.com",
              prefix="mail", prop="from-address", jtype="String", Props="MailProperties", default="noreply@example.com"),
            M("@ConfigurationProperties: storage.bucket-name (String, default uploads) in StorageProperties",
              prefix="storage", prop="bucket-name", jtype="String", default="uploads", Props="StorageProperties"),
        ],
        negatives=[
            N("read opa.max-retries with @Value instead of the properties class", "field injection instead",
              ['@Value("${opa.max-retries:3}") private int maxRetries;'], prop="max-retries"),
            N("remove opa.max-retries", "removes it", ["Delete the field and the YAML key"], prop="max-retries"),
            N("add max-retries to the Micronaut configuration", "another framework", ["@ConfigurationProperties(\"opa\") on a Micronaut bean", "application.yml"]),
            N("validate that opa.max-retries is at least 0", "validation of an existing property", ["@Validated on the class", "@Min(0) on maxRetries"], prop="max-retries"),
        ],
    ),
    coding(
        125, "Add limit/offset pagination to a DRF list view", "python", "https://github.com/nandinigoyaldev/Open-Source-Contribution-Atelier/pull/363",
        root="/home/dev/atelier/backend",
        defaults={"limit": "20", "max": "100", "app": "accounts"},
        derive=lambda v: {"Pag": v["View"].replace("ListView", "").replace("View", "") + "Pagination"},
        todo=["Add a «Pag» LimitOffsetPagination (default «limit», max «max»)", "Use it on «View»", "Test ?limit= and ?offset="],
        calls=[R("«app»/views.py"),
               E("«app»/views.py", "class «View»(", "class «Pag»(LimitOffsetPagination):\n    default_limit = «limit»\n    max_limit = «max»\n\n\nclass «View»("),
               E("«app»/views.py", "    serializer_class = ", "    pagination_class = «Pag»\n    serializer_class = "),
               B("python manage.py test «app»", "Run the app tests, including ?limit=2&offset=2")],
        members=[
            M("Add limit/offset pagination to UserListView (/api/auth/users/)", View="UserListView"),
            M("paginate OrderListView with limit and offset, 50 per page by default", View="OrderListView", limit="50"),
            M("the ProjectListView returns everything at once; add LimitOffsetPagination with max_limit 200", View="ProjectListView", max="200"),
            M("Please support ?limit=&offset= on TicketListView (default 25)", View="TicketListView", limit="25"),
            M("DRF: limit-offset pagination for CommentListView", View="CommentListView"),
            M("add pagination to ArticleListView, default limit 10, max 100", View="ArticleListView", limit="10", max="100"),
        ],
        negatives=[
            N("add cursor pagination to UserListView", "another pagination style", ["pagination_class = CursorPagination with ordering = \"-created\""], View="UserListView"),
            N("set a global DEFAULT_PAGINATION_CLASS in settings", "every view", ["REST_FRAMEWORK = {\"DEFAULT_PAGINATION_CLASS\": ..., \"PAGE_SIZE\": 20}"]),
            N("remove pagination from UserListView", "removes it", ["pagination_class = None"], View="UserListView"),
            N("add limit/offset pagination to the Express /api/users route", "another framework", ["Read req.query.limit/offset", "Pass them to the query"]),
        ],
    ),
    coding(
        126, "Retry HTTP requests with exponential backoff (reqwest-middleware)", "rust", "https://github.com/rojo-rbx/rokit/pull/24",
        root="/home/dev/rokit",
        defaults={"file": "src/http.rs"},
        todo=["Add reqwest-middleware and reqwest-retry", "Wrap the client in RetryTransientMiddleware with «n» retries", "Build and test"],
        calls=[B("cargo add reqwest-middleware reqwest-retry", "Add the crates"),
               R("«file»"),
               E("«file»", "let client = reqwest::Client::new();",
                 "let retry_policy = ExponentialBackoff::builder().build_with_max_retries(«n»);\n    let client = ClientBuilder::new(reqwest::Client::new())\n        .with(RetryTransientMiddleware::new_with_policy(retry_policy))\n        .build();"),
               B("cargo build && cargo test", "Build and test")],
        members=[
            M("Add middleware for retrying requests automatically (exponential backoff, 3 retries)", n="3"),
            M("retry failed HTTP calls up to 5 times with backoff using reqwest-retry", n="5"),
            M("our downloads fail on flaky networks, add exponential backoff retries (max 4) to the reqwest client in src/download.rs", n="4", file="src/download.rs"),
            M("Please wrap the reqwest client with RetryTransientMiddleware, 2 retries", n="2"),
            M("exponential backoff for transient errors, at most 6 retries", n="6"),
            M("add retries (10) with backoff to api/client.rs", n="10", file="api/client.rs"),
        ],
        negatives=[
            N("add a 30 second timeout to the reqwest client", "a timeout, not retries", ["reqwest::Client::builder().timeout(Duration::from_secs(30)).build()?"]),
            N("retry failed requests with exponential backoff in the Python client using tenacity", "another language",
              ["@retry(wait=wait_exponential(), stop=stop_after_attempt(3))"]),
            N("remove the retry middleware", "removes it", ["Use a plain reqwest::Client again", "cargo remove reqwest-retry reqwest-middleware"]),
            N("add a circuit breaker around the reqwest client", "another resilience pattern", ["Track failures", "Open the circuit after N failures", "Half-open probe"]),
        ],
    ),
]
