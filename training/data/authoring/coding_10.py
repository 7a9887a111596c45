"""Coding families 93-99, 102: HTTP routes in axum, Spring and gin, CORS and rate limiting,
HTTP client timeouts, custom exceptions, replacing unwrap with error propagation."""

import re

from dsl import B, E, G, GL, M, N, R, W, coding


def last_static(path):
    segs = [s for s in path.split("/") if s and not s.startswith("{") and not s.startswith(":")]
    return segs[-1].replace("-", "_") if segs else "root"


def axum_route(v):
    has_param = "{" in v["path"]
    return {"meth": v["method"].lower(), "handler": v["method"].lower() + "_" + last_static(v["path"]),
            "extract": "Path(id): Path<String>" if has_param else "",
            "curl": ("curl -s -X " + v["method"] + " localhost:3000" + re.sub(r"\{[^}]+\}", "1", v["path"]))}


def spring(v):
    has_id = "{id}" in v["path"]
    return {"meth": "get" + last_static(v["path"]).title().replace("_", ""),
            "params": "@PathVariable Long id" if has_id else "", "args": "id" if has_id else ""}


def gin(v):
    name = v["prefix"].strip("/").replace("/", "_")
    return {"var": name + "Group" if name else "group", "METHOD": v["method"].upper(),
            "Handler": v["method"].title() + last_static(v["route"]).title().replace("_", "")}


def go_duration(d):
    m = re.fullmatch(r"(\d+)(ms|s|m)", d)
    unit = {"ms": "time.Millisecond", "s": "time.Second", "m": "time.Minute"}[m.group(2)]
    return {"godur": f"{m.group(1)} * {unit}"}


FAMILIES = [
    coding(
        93, "Add a route to an axum server", "rust", "https://github.com/ekala-project/eka-ci/issues/45",
        root="/home/dev/eka-ci", defaults={"method": "GET", "file": "backend/server/src/web.rs"},
        derive=axum_route,
        todo=["Write the async handler «handler»", "Route «method» «path» to it in «file»", "Build and call it"],
        calls=[R("«file»"),
               E("«file»", "    Router::new()\n", '    Router::new()\n        .route("«path»", «meth»(«handler»))\n'),
               E("«file»", "\n// handlers\n", '\n// handlers\n\nasync fn «handler»(«extract») -> impl IntoResponse {\n    Json(serde_json::json!({"ok": true}))\n}\n'),
               B("cargo build", "Build"),
               B("«curl»", "Call the new route")],
        members=[
            M("A GET endpoint at /api/v1/logs/{drv} that returns dummy data for now", method="GET", path="/api/v1/logs/{drv}"),
            M("add a `/status/ping` route to the axum server", path="/status/ping"),
            M("axum: POST /api/v1/jobs handler", method="POST", path="/api/v1/jobs"),
            M("Please add DELETE /api/v1/builds/{id} to the router", method="DELETE", path="/api/v1/builds/{id}"),
            M("new route GET /metrics/summary in web.rs", method="GET", path="/metrics/summary"),
            M("can you expose PUT /api/v1/settings in axum?", method="PUT", path="/api/v1/settings"),
        ],
        negatives=[
            N("add a GET /api/v1/logs/{drv} endpoint in actix-web", "another framework",
              ['#[get("/api/v1/logs/{drv}")] async fn ...', "App::new().service(...)"], path="/api/v1/logs/{drv}"),
            N("add a websocket route /api/v1/logs/stream to the axum server", "a websocket upgrade",
              ["WebSocketUpgrade extractor", "ws.on_upgrade(handle_socket)"], path="/api/v1/logs/stream"),
            N("remove the /status/ping route", "removes a route", ["Delete the .route line and the handler"], path="/status/ping"),
            N("require a bearer token on every /api/v1 route", "middleware on existing routes",
              ["A middleware::from_fn auth layer on the /api/v1 router"]),
        ],
    ),
    coding(
        94, "Add a CORS layer to an axum server", "rust", "https://github.com/sheroz/axum-rest-api-sample/pull/11",
        root="/home/dev/axum-rest-api-sample",
        todo=["Add tower-http with the cors feature", "Add a CorsLayer allowing «origin»", "Check the preflight answer"],
        calls=[R("Cargo.toml"),
               B("cargo add tower-http --features cors", "Add the dependency"),
               E("src/main.rs", "    let app = Router::new()\n",
                 '    let cors = CorsLayer::new()\n        .allow_origin("«origin»".parse::<HeaderValue>().unwrap())\n        .allow_methods([Method::GET, Method::POST])\n        .allow_headers([CONTENT_TYPE]);\n    let app = Router::new()\n'),
               E("src/main.rs", "        .with_state(state);\n", "        .with_state(state)\n        .layer(cors);\n"),
               B("curl -si -X OPTIONS localhost:3000/api -H 'Origin: «origin»' -H 'Access-Control-Request-Method: POST' | grep -i access-control",
                 "Check the preflight")],
        members=[
            M("added a cors layer allowing http://localhost:3000", origin="http://localhost:3000"),
            M("enable CORS for https://app.example.com in the axum server", origin="https://app.example.com"),
            M("the frontend on http://localhost:5173 gets CORS errors, add tower-http cors for that origin", origin="http://localhost:5173"),
            M("Please allow cross-origin requests from https://dashboard.acme.io", origin="https://dashboard.acme.io"),
            M("axum cors: allow origin http://127.0.0.1:8080", origin="http://127.0.0.1:8080"),
            M("add a CorsLayer for origin https://staging.myapp.dev", origin="https://staging.myapp.dev"),
        ],
        negatives=[
            N("add a permissive CORS layer that allows any origin", "any origin instead of one", [".layer(CorsLayer::permissive())"]),
            N("remove the CORS layer from the axum router", "removes it", ["Delete the CorsLayer and .layer(cors)"]),
            N("enable CORS for http://localhost:3000 in the Express server", "another framework",
              ["npm install cors", "app.use(cors({ origin: \"http://localhost:3000\" }))"], origin="http://localhost:3000"),
            N("add a compression layer to the axum router", "another tower-http layer",
              ["cargo add tower-http --features compression-gzip", ".layer(CompressionLayer::new())"]),
        ],
    ),
    coding(
        95, "Add a GET endpoint to a Spring REST controller", "java", "https://github.com/rajadilipkolli/my-spring-boot-experiments/pull/139",
        root="/home/dev/my-spring-boot-experiments",
        defaults={"Ctrl": "CustomerController", "Svc": "CustomerService"},
        derive=spring,
        todo=["Add @GetMapping(\"«path»\") returning «Type» to «Ctrl»", "Add a MockMvc test for it", "Run the controller tests"],
        calls=[R("src/main/java/com/example/web/«Ctrl».java"),
               E("src/main/java/com/example/web/«Ctrl».java", "    private final «Svc» service;\n",
                 '    private final «Svc» service;\n\n    @GetMapping("«path»")\n    public ResponseEntity<«Type»> «meth»(«params») {\n        return ResponseEntity.ok(service.«meth»(«args»));\n    }\n'),
               E("src/test/java/com/example/web/«Ctrl»Test.java", "class «Ctrl»Test {\n",
                 'class «Ctrl»Test {\n\n    @Test\n    void «meth»ReturnsOk() throws Exception {\n        mockMvc.perform(get("«path»", 1)).andExpect(status().isOk());\n    }\n'),
               B("mvn -q test -Dtest=«Ctrl»Test", "Run the tests")],
        members=[
            M("adds get mapping: GET /api/customers/{id} returning a CustomerResponse", path="/api/customers/{id}", Type="CustomerResponse"),
            M('spring: add @GetMapping("/api/orders") that returns a List<OrderDto>', path="/api/orders", Type="List<OrderDto>"),
            M("create a GET endpoint /api/books/{id} (BookDto) in the controller", path="/api/books/{id}", Type="BookDto"),
            M("Please add GET /health/details returning HealthDetails to our Spring app", path="/health/details", Type="HealthDetails"),
            M("new rest endpoint GET /api/users/me -> UserProfile", path="/api/users/me", Type="UserProfile"),
            M("expose GET /api/stats as StatsSummary", path="/api/stats", Type="StatsSummary"),
        ],
        negatives=[
            N("add a POST /api/customers endpoint that creates a customer", "another method with a request body",
              ["@PostMapping(\"/api/customers\") with @RequestBody @Valid CustomerRequest", "Return 201 Created"]),
            N("add a GET /api/customers/{id} route to the Express app", "another framework",
              ["router.get(\"/api/customers/:id\", ...)"], path="/api/customers/{id}"),
            N("restrict GET /api/customers/{id} to admins with @PreAuthorize", "security on an existing endpoint",
              ["@PreAuthorize(\"hasRole('ADMIN')\") on the method", "Enable method security"], path="/api/customers/{id}"),
            N("add a Feign client method for GET /api/customers/{id}", "the client side",
              ["@GetMapping(\"/api/customers/{id}\") CustomerResponse getCustomer(@PathVariable Long id) in a @FeignClient"], path="/api/customers/{id}"),
        ],
    ),
    coding(
        96, "Add a route group to a gin router", "go", "https://github.com/chengchuu/go-gin-gee/pull/48",
        root="/home/dev/go-gin-gee",
        defaults={"method": "GET"},
        derive=gin,
        todo=["Create a «prefix» route group", "Register «method» «route» on it", "Test the route"],
        calls=[R("internal/router/router.go"),
               E("internal/router/router.go", "\tr := gin.Default()\n",
                 '\tr := gin.Default()\n\t«var» := r.Group("«prefix»")\n\t{\n\t\t«var».«METHOD»("«route»", handlers.«Handler»)\n\t}\n'),
               B("go test ./internal/router/...", "Run the router tests"),
               B("curl -s -X «METHOD» localhost:8080«prefix»«route»", "Call it")],
        members=[
            M("feat(router): add a /server group with GET /info", prefix="/server", route="/info", method="GET"),
            M("gin: group /api/v1 and add POST /orders", prefix="/api/v1", method="POST", route="/orders"),
            M("add an /admin route group with GET /stats", prefix="/admin", route="/stats"),
            M("Please create a gin group /internal and register GET /healthz under it", prefix="/internal", route="/healthz"),
            M("new /webhooks group, POST /github", prefix="/webhooks", method="POST", route="/github"),
            M("route group /v2 with GET /users/:id", prefix="/v2", route="/users/:id"),
        ],
        negatives=[
            N("add auth middleware to the /server group", "middleware on an existing group",
              ["serverGroup.Use(middleware.Auth())"], prefix="/server"),
            N("add GET /info to the echo router", "another framework", ['e.GET("/info", handlers.Info)'], route="/info"),
            N("remove the /server route group", "removes it", ["Delete the group and its routes"], prefix="/server"),
            N("rename the /server group to /system", "renames the prefix", ['r.Group("/system")', "Update clients and docs"], prefix="/server"),
        ],
    ),
    coding(
        97, "Rate-limit a login route with express-rate-limit", "typescript", "https://github.com/lumenlabss/LumenOne/pull/22",
        root="/home/dev/LumenOne",
        todo=["Install express-rate-limit", "Create a limiter of «max» requests per «mins» minutes", "Apply it to «route»",
              "Test that one more request gets 429"],
        calls=[B("npm install express-rate-limit", "Install"),
               R("src/app.js"),
               E("src/app.js", "const app = express();\n",
                 "const app = express();\nconst limiter = rateLimit({ windowMs: «mins» * 60 * 1000, limit: «max», standardHeaders: true, legacyHeaders: false });\n"),
               E("src/app.js", 'app.post("«route»", ', 'app.post("«route»", limiter, '),
               B("npm test", "Run the tests, including the 429 case")],
        members=[
            M("Added rate limiting to the /login route: 5 requests per 15 minutes", route="/login", max="5", mins="15"),
            M("limit POST /api/auth/login to 10 attempts per 5 minutes with express-rate-limit", route="/api/auth/login", max="10", mins="5"),
            M("rate limit the /signup endpoint, 3 per hour (60 min)", route="/signup", max="3", mins="60"),
            M("Please add express-rate-limit on /password-reset: max 5 per 10 minutes", route="/password-reset", max="5", mins="10"),
            M("throttle /api/contact to 20 requests every 1 minute", route="/api/contact", max="20", mins="1"),
            M("brute force protection for /admin/login, 5 tries per 30 minutes", route="/admin/login", max="5", mins="30"),
        ],
        negatives=[
            N("add a global rate limit of 100 requests per 15 minutes to every route", "scope: every route",
              ["app.use(rateLimit({ windowMs: 15 * 60 * 1000, limit: 100 }))"], max="100", mins="15"),
            N("rate limit /login in nginx", "another layer", ["limit_req_zone ... rate=5r/m;", "limit_req zone=login in location /login"], route="/login"),
            N("remove the rate limit from /login", "removes it", ["Drop the limiter from the route"], route="/login"),
            N("lock an account after 5 failed logins", "per-account lockout, not request rate",
              ["Count failures per user", "Set locked_until after 5", "Reset on success"]),
        ],
    ),
    coding(
        98, "Give a Go HTTP client a timeout", "go", "https://github.com/awa/go-iap/pull/66",
        root="/home/dev/go-iap", defaults={"file": "appstore/validator.go"},
        derive=lambda v: go_duration(v["dur"]),
        todo=["Replace http.DefaultClient with an http.Client with Timeout «dur» in «file»", "Run the tests"],
        calls=[G("http.DefaultClient", "."),
               R("«file»"),
               E("«file»", "http.DefaultClient", "&http.Client{Timeout: «godur»}", all=True),
               B("go test ./...", "Run the tests")],
        members=[
            M("Added client timeout because http.DefaultClient doesn't have one: use 10s", dur="10s"),
            M("set a 30s timeout on the HTTP client in client.go", dur="30s", file="client.go"),
            M("our requests hang forever, give the http.Client a 5s timeout", dur="5s"),
            M("Please add a 60s default timeout for the Go http client", dur="60s"),
            M("http client timeout 2m for the downloader (downloader.go)", dur="2m", file="downloader.go"),
            M("use 500ms as the http.Client timeout in the health checker", dur="500ms"),
        ],
        negatives=[
            N("add a --timeout flag to the CLI", "makes it configurable by the user", ['flag.Duration("timeout", 10*time.Second, ...)']),
            N("set ReadTimeout and WriteTimeout on the http.Server", "the server side", ["&http.Server{ReadTimeout: 5 * time.Second, WriteTimeout: 10 * time.Second}"]),
            N("retry failed HTTP requests with exponential backoff", "retries instead of a timeout", ["Loop with backoff between attempts", "Retry only idempotent requests"]),
            N("set a 10s timeout on fetch in the TypeScript client", "another language",
              ["fetch(url, { signal: AbortSignal.timeout(10_000) })"], dur="10s"),
        ],
    ),
    coding(
        99, "Raise a custom exception instead of ValueError", "python", "https://github.com/sayanarijit/expandvars/issues/10",
        root="/home/dev/expandvars",
        defaults={"pkg": "expandvars", "base": "ValueError"},
        todo=["Define «Exc»(«base») in «pkg»/exceptions.py", "Raise «Exc» where the code raised ValueError", "Update the tests", "Run them"],
        calls=[R("«pkg»/exceptions.py"),
               E("«pkg»/exceptions.py", "\n\nclass ", '\n\nclass «Exc»(«base»):\n    """Raised for «Exc» conditions."""\n\n\nclass '),
               G("raise ValueError", "«pkg»"),
               E("«pkg»/core.py", "raise ValueError(", "raise «Exc»("),
               E("tests/test_core.py", "pytest.raises(ValueError)", "pytest.raises(«Exc»)"),
               B("python -m pytest -q", "Run the tests")],
        members=[
            M("Use custom exceptions instead of ValueError: add ParameterNullOrUnset", Exc="ParameterNullOrUnset"),
            M("raise a new UnboundVariable error (subclass of KeyError) instead of ValueError", Exc="UnboundVariable", base="KeyError"),
            M("define ConfigError and throw it from the loader instead of ValueError", Exc="ConfigError"),
            M("Please add an InvalidDateFormat exception, keep it a ValueError subclass for compatibility", Exc="InvalidDateFormat", base="ValueError"),
            M("custom exception RateLimitExceeded for the client instead of ValueError", Exc="RateLimitExceeded"),
            M("make a BadSyntax exception class and use it in the parser", Exc="BadSyntax"),
        ],
        negatives=[
            N("catch ValueError in the CLI and print a friendly message", "handles errors instead of defining one",
              ["try/except ValueError in main()", "print to stderr and exit 2"]),
            N("replace the custom exceptions with plain ValueError", "the opposite", ["Delete the classes", "raise ValueError everywhere"]),
            N("add a custom error enum to the Rust crate", "another language", ["#[derive(thiserror::Error)] enum Error { ... }"]),
            N("log a warning instead of raising ValueError", "stops raising", ["logger.warning(...)", "return a default"]),
        ],
    ),
    coding(
        102, "Replace unwrap() with error propagation", "rust", "https://github.com/felixc/rexiv2/pull/67",
        root="/home/dev/rexiv2",
        defaults={"file": "src/metadata.rs", "ret": "String", "err": "Rexiv2Error"},
        todo=["Make «func» return Result<«ret», «err»>", "Replace its unwrap() calls with ?", "Update the callers", "Build and test"],
        calls=[R("«file»"),
               E("«file»", ") -> «ret» {", ") -> Result<«ret», «err»> {"),
               E("«file»", ".unwrap()", "?", all=True),
               G(r"«func»\(", "src"),
               B("cargo build && cargo test", "Build and test")],
        members=[
            M("Clean up the unwrap() calls in get_tag_string and replace them with ?", func="get_tag_string"),
            M("load_config panics on a missing file; make it return Result and use ? instead of unwrap", func="load_config"),
            M("replace unwrap with proper error handling in parse_header (src/http.rs)", func="parse_header", file="src/http.rs"),
            M("no more .unwrap() in read_manifest please, propagate the errors", func="read_manifest"),
            M("make `open_db` return a Result<Connection, DbError> instead of unwrapping", func="open_db", ret="Connection", err="DbError"),
            M("handle errors in fetch_page with ? rather than unwrap", func="fetch_page"),
        ],
        negatives=[
            N("replace the unwrap() calls in get_tag_string with expect() and a message", "still panics, with a message",
              ['.unwrap() -> .expect("tag must be a string")'], func="get_tag_string"),
            N("deny clippy::unwrap_used for the whole crate", "a lint instead of fixing one function",
              ['[lints.clippy] unwrap_used = "deny"', "Fix every occurrence"]),
            N("make get_tag_string return an Option instead of panicking", "Option, not Result", ["-> Option<String>", ".ok()? instead of unwrap"], func="get_tag_string"),
            N("replace panics with returned errors in the Go client", "another language", ["Return (T, error)", "Check err at call sites"]),
        ],
    ),
]
