"""Labelled sessions for bench/quality.sh: what each session said, and three queries that
should find it.

Each topic is one Claude Code session: a prompt, the agent's prose along the way, and its
closing message. Its queries:
  kw     keyword-style: words the session uses (what a person remembers verbatim);
  para   a paraphrase sharing no content word with anything the session said (gen.py
         checks), so only meaning can find it;
  mixed  one or two remembered words plus a paraphrase of the rest;
  ident  (some topics) an identifier, number or path copied verbatim, which the model
         does not understand: the keyword lane's ground.
The answer is the session. UNRELATED holds queries about things no session mentions: their
best semantic hits show where noise lies (the similarity floor's calibration).
"""

LOG = (
    "\n\n```\n"
    "2026-07-03T09:14:22.118Z INFO  worker-3 starting batch 8812 (412 items)\n"
    "2026-07-03T09:14:22.907Z WARN  worker-3 slow item 8812/17 took 791ms\n"
    "2026-07-03T09:14:23.551Z INFO  worker-1 heartbeat ok queue_depth=1204\n"
    "2026-07-03T09:14:24.002Z WARN  worker-3 slow item 8812/18 took 1033ms\n"
    "2026-07-03T09:14:25.776Z INFO  worker-2 heartbeat ok queue_depth=1188\n"
    "2026-07-03T09:14:26.310Z ERROR worker-3 {err}\n"
    "2026-07-03T09:14:26.311Z INFO  supervisor restarting worker-3 (attempt 2 of 5)\n"
    "```\n\n"
)

TOPICS = [
    dict(
        id="csv-bom",
        ident="utf-8-sig",
        prompt="The importer chokes on spreadsheets exported from Excel: the first column header comes through as '\\ufeffemail' and every row fails validation.",
        said=[
            "The file starts with a UTF-8 byte order mark. Our reader opens it with plain utf-8, so the BOM sticks to the first header name and the lookup for 'email' misses.",
            "Switching the decoder to utf-8-sig strips the BOM when present and is a no-op otherwise, so files without it keep working.",
        ],
        final="Fixed the Excel import: the CSV reader now decodes with utf-8-sig, so a leading byte order mark no longer corrupts the first header. Added a fixture exported from Excel and a regression test.",
        kw="csv byte order mark header utf-8-sig",
        para="tabular upload broke because of an invisible character at the beginning of the document",
        mixed="excel upload invisible character at the beginning",
    ),
    dict(
        id="dst-cron",
        prompt="Our nightly billing job ran twice on Sunday. Was it the daylight saving change?",
        said=[
            "Yes: the scheduler computes the next run in local time, and on the night clocks fall back 01:30 happens twice, so the job fired at both of them.",
            "I'll store schedules in UTC and convert only for display; a run keyed by its UTC instant can't repeat.",
        ],
        final="The billing job now schedules in UTC, so the autumn clock change can no longer run it twice; added a test that steps through the fall-back hour and asserts exactly one run.",
        kw="daylight saving billing job ran twice",
        para="invoicing task executed double during the seasonal summertime adjustment",
        mixed="billing executed two times when clocks moved",
    ),
    dict(
        id="n-plus-one",
        ident="prefetch_related",
        prompt="The orders page takes 4 seconds to load for big customers. Can you profile it?",
        said=[
            "The profile shows 1,800 SQL queries per request: the template touches order.line_items inside the loop, and each access lazily loads that order's rows.",
            "Prefetching the line items with the orders turns those into two queries. I'll add select_related for the customer and prefetch_related for the items.",
        ],
        final="The orders page went from 4.1 s to 180 ms for the largest customer: line items and customers are prefetched with the orders instead of loaded one order at a time. A test asserts the page runs at most 3 queries.",
        kw="orders page prefetch_related line items queries",
        para="listing screen was sluggish because the database got hit for every row",
        mixed="sluggish orders screen database hit per row",
    ),
    dict(
        id="jwt-clock-skew",
        ident="iat nbf",
        prompt="Users on one of our mobile clients randomly get logged out right after signing in.",
        said=[
            "The tokens are rejected with 'token used before issued'. The phones' clocks run a few seconds ahead of the server, so the iat claim is in our future.",
            "Allowing 30 seconds of leeway on iat and nbf is the standard fix; exp keeps its strict check.",
        ],
        final="Sign-ins from devices whose clocks run ahead no longer fail: token validation allows 30 s of leeway on the issued-at and not-before claims. Added tests with a skewed clock.",
        kw="token used before issued iat leeway",
        para="people on handsets get kicked out immediately after authenticating because their time is off",
        mixed="phones kicked out after login time drift",
    ),
    dict(
        id="docker-layer-cache",
        ident="package-lock.json npm ci",
        prompt="Every CI build reinstalls all npm packages even when package.json didn't change. Builds take 9 minutes.",
        said=[
            "The Dockerfile copies the whole source tree before npm ci, so any source change invalidates that layer and the install reruns.",
            "Copying package.json and package-lock.json first, running npm ci, then copying the rest keeps the dependency layer cached.",
        ],
        final="Reordered the Dockerfile so dependencies install from the lockfile before the sources are copied: the npm ci layer is now reused and CI builds dropped from 9 to 2.5 minutes.",
        kw="Dockerfile npm ci layer cached package-lock",
        para="pipeline spends ages downloading modules on each push; fix the image recipe order",
        mixed="image recipe downloads modules on each push lockfile",
    ),
    dict(
        id="float-money",
        ident="19.989999",
        prompt="A customer was charged 19.989999 instead of 19.99. Where does that come from?",
        said=[
            "Prices are multiplied as binary floats before rounding: 0.1 and 0.7 have no exact representation, and the tax step accumulates the error.",
            "I'll move amounts to integer cents end to end and round once, half-even, at the tax step.",
        ],
        final="Amounts are now integer cents everywhere, with a single half-even rounding when tax is applied; the 19.989999 charge can't recur. Added property tests comparing against a decimal reference.",
        kw="charged 19.989999 integer cents rounding",
        para="a shopper paid a slightly wrong sum due to imprecise fractional arithmetic",
        mixed="shopper paid wrong sum fractional cents",
    ),
    dict(
        id="flaky-port",
        prompt="test_server_starts fails maybe one run in ten on CI with 'address already in use'.",
        said=[
            "The tests all bind port 8080, and pytest-xdist runs them in parallel workers, so two servers race for the same port.",
            "Binding to port 0 lets the kernel pick a free one; the fixture then reads the actual port back from the socket.",
        ],
        final="The server fixture binds port 0 and reads back the port the kernel assigned, so parallel test workers never collide; test_server_starts passed 200 runs in a row.",
        kw="address already in use port 0 fixture",
        para="intermittent red checks when several suites launch listeners simultaneously",
        mixed="intermittent failures when suites launch listeners port",
    ),
    dict(
        id="oom-image-resize",
        prompt="The thumbnail worker gets OOM-killed on some uploads. Memory limit is 512 MB.",
        said=[
            "A 12000x9000 panorama decodes to about 430 MB of RGBA pixels before we even start resizing, and a second copy pushes it over the limit.",
            "Pillow's draft mode lets the JPEG decoder downscale while decoding; combined with thumbnail() it never materialises the full-size bitmap.",
        ],
        final="The thumbnail worker no longer runs out of memory on huge photos: JPEGs are decoded at reduced size via draft mode and resized in place, peaking at 60 MB for a 108-megapixel panorama.",
        kw="thumbnail worker OOM-killed draft mode pillow",
        para="picture shrinking process dies from exhausting RAM on enormous wide shots",
        mixed="picture shrinking process exhausting RAM",
    ),
    dict(
        id="regex-backtracking",
        ident="254 characters",
        prompt="The API hung at 100% CPU on a single request. The request body was a long string of spaces followed by an exclamation mark.",
        said=[
            "The email validator's pattern nests quantifiers, (\\s*\\w+)*@, and on a long run of whitespace with no match it backtracks exponentially.",
            "Rewriting it without nested repetition, and capping input length at 254 characters, bounds the matching time.",
        ],
        final="Fixed the catastrophic backtracking in the email validator: the pattern no longer nests quantifiers and inputs over 254 characters are rejected up front. The hostile request now returns in 0.2 ms.",
        kw="catastrophic backtracking email validator regex",
        para="one malicious payload froze the service by making expression evaluation take forever",
        mixed="malicious payload froze service validator",
    ),
    dict(
        id="i18n-plural",
        ident="Intl.PluralRules",
        prompt="The Polish translation says '5 plik' instead of '5 plików'. Our pluralisation only knows one and other.",
        said=[
            "Polish has separate forms for few (2-4, except 12-14) and many; our helper maps everything that isn't 1 to 'other'.",
            "Using the CLDR plural rules through Intl.PluralRules gives the right category for each locale.",
        ],
        final="Plurals now follow the CLDR rules per locale via Intl.PluralRules, so Polish, Russian and Arabic get their few/many forms. Added translations for the missing categories and tests for 1, 2, 5, 12, 22.",
        kw="Polish plural forms Intl.PluralRules CLDR",
        para="wrong grammatical number in a slavic language for counts like five",
        mixed="slavic language grammatical number CLDR",
    ),
    dict(
        id="retry-storm",
        prompt="When the payments provider had a 2-minute outage, our own API went down too and took 20 minutes to recover.",
        said=[
            "Every client retried immediately and forever, so the outage turned into a thundering herd: request volume went up 40x the moment the provider came back.",
            "Capped retries at 4 with exponential backoff and full jitter, plus a circuit breaker that fails fast for 30 s after 5 consecutive errors.",
        ],
        final="Calls to the payments provider now retry at most 4 times with jittered exponential backoff behind a circuit breaker; a replay of the outage recovers in under a minute instead of 20.",
        kw="thundering herd retries outage payments provider",
        para="when the upstream vendor blipped, everyone hammered it again at once and we collapsed",
        mixed="upstream vendor blipped everyone hammered backoff",
    ),
    dict(
        id="git-lfs",
        prompt="Cloning the repo takes 15 minutes and 3 GB. Most of it is old training videos under assets/.",
        said=[
            "The history holds every version of the mp4 files. Moving them to Git LFS and rewriting history with git lfs migrate keeps only pointers in the packs.",
            "The rewrite changes every commit hash, so everyone has to re-clone; I'll write the migration note for the team.",
        ],
        final="Migrated assets/*.mp4 to Git LFS and rewrote history: a fresh clone is 140 MB and takes 40 seconds. MIGRATION.md tells everyone to re-clone.",
        kw="git lfs migrate mp4 clone",
        para="checking out the codebase is painfully slow since huge media blobs bloat its past",
        mixed="huge media blobs bloat repository history lfs",
    ),
    dict(
        id="sql-injection",
        ident="search_products",
        prompt="Security scan flagged the search endpoint. Please look at what it found.\n\n" + "Finding: user-controlled input reaches a raw SQL string in search_products(). " * 6,
        said=[
            "The report is right: search_products formats the term straight into the WHERE clause with an f-string, so a quote breaks out of the literal.",
            "Parameterised queries fix it; I'll also add a test that searches for a string containing a quote and a semicolon.",
        ],
        final="The product search now passes the term as a bound parameter instead of formatting it into the SQL, closing the injection the scan found. Added a test with hostile input.",
        kw="search_products sql injection parameterised",
        para="attacker could smuggle commands through the lookup box into our data store",
        mixed="attacker smuggle commands through product lookup box",
    ),
    dict(
        id="webhook-signature",
        ident="compare_digest X-Signature",
        prompt="Our webhook receiver accepts requests from anyone. Add verification.",
        said=[
            "The sender signs each body with HMAC-SHA256 using the shared secret and puts the hex digest in X-Signature. We must hash the raw bytes, before JSON parsing reorders anything.",
            "Comparison has to be constant-time (hmac.compare_digest), and a timestamp header older than 5 minutes is rejected to stop replays.",
        ],
        final="Webhook requests are now verified: HMAC-SHA256 over the raw body against X-Signature with a constant-time compare, and deliveries older than five minutes are refused.",
        kw="webhook HMAC-SHA256 X-Signature compare_digest",
        para="make sure incoming callbacks truly come from the partner and cannot be resent later",
        mixed="incoming callbacks authenticity HMAC",
    ),
    dict(
        id="cors-preflight",
        ident="Access-Control-Allow-Origin",
        prompt="The new dashboard on app.example.org can't call the API: the browser console shows a CORS error on OPTIONS.",
        said=[
            "The preflight OPTIONS request hits our auth middleware first and gets a 401, so the browser never sees Access-Control-Allow-Origin.",
            "Handling OPTIONS before authentication and allowing the dashboard's origin with credentials fixes it.",
        ],
        final="CORS preflight requests are answered before authentication, with the dashboard origin allowed and credentials permitted; the dashboard can call the API again.",
        kw="CORS preflight OPTIONS Access-Control-Allow-Origin",
        para="web frontend on another domain blocked by chrome from reaching our backend",
        mixed="frontend on another domain blocked by browser preflight",
    ),
    dict(
        id="mobile-dark-mode",
        prompt="In dark mode the settings screen shows black text on a near-black background.",
        said=[
            "The settings screen hard-codes #111 for labels instead of using the theme's onSurface colour, so it ignores the dark palette.",
            "I'll replace the literal colours with theme tokens and add a screenshot test in both themes.",
        ],
        final="The settings screen uses theme colour tokens now, so labels are readable in dark mode; screenshot tests cover light and dark.",
        kw="dark mode settings screen text colour theme tokens",
        para="captions unreadable at night appearance because of hardcoded hues",
        mixed="labels unreadable night appearance settings",
    ),
    dict(
        id="k8s-free-deploy-rollback",
        prompt="Last deploy broke checkout and it took us 40 minutes to go back. We need a one-command rollback.",
        said=[
            "Releases are tarballs unpacked over the previous one, so there is nothing to go back to. Keeping the last five releases in timestamped directories behind a 'current' symlink makes rollback a symlink swap.",
            "The swap is atomic with rename(2): create the new symlink under a temporary name and rename it over 'current'.",
        ],
        final="Added scripts/rollback: releases live in timestamped directories and 'current' is swapped atomically, so going back to the previous release takes one command and about two seconds.",
        kw="rollback symlink releases current atomic",
        para="reverting a bad ship cost us nearly an hour; want an instant undo for production",
        mixed="instant undo for production releases",
    ),
    dict(
        id="pagination-dupes",
        prompt="The export API returns some records twice and skips others when paging through large result sets.",
        said=[
            "Paging uses OFFSET with ORDER BY created_at, which isn't unique: rows sharing a timestamp can swap between pages, and inserts during the export shift everything.",
            "Keyset pagination on (created_at, id) is stable: each page asks for rows after the last pair it saw.",
        ],
        final="The export API pages by keyset on (created_at, id) instead of OFFSET, so records are neither repeated nor skipped, even while new rows arrive. The cursor is an opaque token.",
        kw="keyset pagination OFFSET duplicates export",
        para="walking through a long listing in chunks shows some entries again and loses some",
        mixed="walking listing in chunks shows entries again keyset",
    ),
    dict(
        id="log-rotation-disk",
        ident="/var/log/app",
        prompt="Disk on the app server filled up overnight and the service crashed.",
        said=[
            "/var/log/app is 38 GB: the debug logging we turned on last week writes 400 MB an hour and logrotate isn't configured for that directory.",
            "Added a logrotate rule (daily, keep 7, compress) and set the level back to info.",
        ],
        final="The app server's disk filled with debug logs; they now rotate daily, compressed, seven kept, and the log level is back to info. Added a disk-usage alert at 80%.",
        kw="logrotate disk full debug logs /var/log/app",
        para="storage ran out while we slept because chatty diagnostics were never pruned",
        mixed="storage ran out overnight chatty diagnostics logrotate",
    ),
    dict(
        id="unicode-normalisation",
        ident="U+0301",
        prompt="Two users managed to register as 'José', and logging in as one sometimes reaches the other account.",
        said=[
            "One name is stored precomposed (é as U+00E9), the other decomposed (e + U+0301). They look identical but compare unequal byte-wise.",
            "Normalising usernames to NFC at registration and at login, plus a migration that merges or flags existing collisions, settles it.",
        ],
        final="Usernames are normalised to NFC on registration and login; a migration found 3 lookalike pairs and flagged them for support. Tests cover composed and decomposed accents.",
        kw="NFC normalisation usernames precomposed decomposed",
        para="diacritic nicknames appearing equal are treated as distinct people",
        mixed="accented names look identical treated different NFC",
    ),
    dict(
        id="slow-test-suite",
        prompt="The test suite takes 14 minutes locally. It used to be 3. Find what got slow.",
        said=[
            "Timing per test shows 11 minutes in tests that each create a fresh Postgres database from migrations: 340 of them at about 2 s each.",
            "Running the migrations once into a template database and cloning it per test (CREATE DATABASE ... TEMPLATE) takes 80 ms.",
        ],
        final="The suite runs in 3 min 20 s again: tests clone a migrated template database instead of replaying every migration for each test.",
        kw="template database migrations per test suite 14 minutes",
        para="checks became sluggish as each case rebuilt its whole schema from scratch",
        mixed="checks very slow each case rebuilt schema template",
    ),
    dict(
        id="email-deliverability",
        prompt="Password reset emails land in spam for Gmail users.",
        said=[
            "Our sending domain has no DKIM signature and the SPF record doesn't include the mail provider, so Gmail treats the mails as unauthenticated.",
            "Published the provider's DKIM key, added it to SPF, and a DMARC policy in monitoring mode.",
        ],
        final="Reset emails now pass SPF, DKIM and DMARC alignment and arrive in the inbox at Gmail and Outlook; DMARC reports go to the ops mailbox.",
        kw="password reset emails spam DKIM SPF DMARC",
        para="account recovery messages get flagged as junk by a big webmail company",
        mixed="account recovery messages flagged junk DKIM",
    ),
    dict(
        id="race-counter",
        prompt="The like counter on posts is sometimes lower than the number of likes in the likes table.",
        said=[
            "The handler reads the count, adds one in Python and writes it back; two concurrent likes both read 41 and both write 42.",
            "An atomic UPDATE posts SET likes = likes + 1 moves the increment into the database.",
        ],
        final="Likes are counted with an atomic in-database increment, so concurrent likes are no longer lost; a backfill recomputed every post's count from the likes table.",
        kw="like counter lost update atomic increment",
        para="simultaneous reactions overwrite each other so the tally comes out too small",
        mixed="simultaneous reactions overwrite tally increment",
    ),
    dict(
        id="search-stemming",
        prompt="Searching the help center for 'running' doesn't find the article titled 'How to run reports'.",
        said=[
            "The help-center index uses the standard analyzer, which lowercases but doesn't stem, so 'running' and 'run' are different terms.",
            "Switching the field to the English analyzer stems both to 'run'; the index has to be rebuilt.",
        ],
        final="Help-center search stems English words now, so 'running' finds 'run'; reindexed 2,300 articles.",
        kw="help center search stemming analyzer running run",
        para="looking up a verb in its -ing shape misses the support page using the base form",
        mixed="support page lookup misses base verb form analyzer",
    ),
    dict(
        id="timezone-report",
        ident="AT TIME ZONE store.tz",
        prompt="The daily sales report for Sydney shows yesterday's late orders in today's numbers.",
        said=[
            "The report groups by DATE(created_at) in UTC. For Sydney (UTC+10/+11) any order after 14:00 or 13:00 UTC belongs to the next local day.",
            "Grouping by the store's local date, computed with AT TIME ZONE store.tz, puts each order on the right day.",
        ],
        final="Daily sales are grouped by each store's local date, so Sydney's evening orders land on the correct day; the last 90 days of reports were regenerated.",
        kw="daily sales report Sydney AT TIME ZONE",
        para="revenue summary for an australian shop attributes night purchases to the wrong calendar page",
        mixed="australian shop evening purchases wrong day",
    ),
    dict(
        id="feature-flag-cleanup",
        prompt="We have 140 feature flags and nobody knows which are still used. Clean up.",
        said=[
            "Cross-referencing the flag service with the code: 93 flags have been 100% on for over six months and 12 are referenced nowhere.",
            "Removed the 12 dead flags and inlined the 93 permanently enabled ones, deleting the else branches.",
        ],
        final="Removed 105 stale feature flags: 12 unreferenced ones and 93 that had been fully on for six months, with their dead branches. 35 flags remain, each with an owner.",
        kw="stale feature flags removed inlined",
        para="prune toggles that have been switched for good",
        mixed="prune toggles permanently switched flags",
    ),
    dict(
        id="mem-leak-listener",
        prompt="The browser tab grows to 2 GB after an hour on the live dashboard." + LOG.format(err="renderer: out of memory"),
        said=[
            "Each chart component subscribes to the websocket in useEffect but never unsubscribes, so every re-mount leaves a listener holding its old data.",
            "Returning the unsubscribe function from the effect releases them; the heap stays flat at 180 MB over an hour.",
        ],
        final="Fixed the dashboard's memory growth: chart components now unsubscribe from the live feed when they unmount. Heap stays around 180 MB after an hour.",
        kw="dashboard memory useEffect unsubscribe listener",
        para="web page keeps eating RAM the longer it remains visible until chrome crashes",
        mixed="web page eating RAM until the tab dies chart",
    ),
    dict(
        id="pdf-fonts",
        ident="Noto Sans JP",
        prompt="Invoices generated as PDF show boxes instead of Japanese characters.",
        said=[
            "The PDF renderer embeds only Helvetica, which has no CJK glyphs, so every kanji becomes a missing-glyph box.",
            "Embedding Noto Sans JP (subsetted to the glyphs used) fixes it and keeps the files small.",
        ],
        final="PDF invoices embed a subsetted Noto Sans JP, so Japanese text renders instead of boxes; file size grew by about 40 KB.",
        kw="PDF invoices Japanese boxes Noto Sans font",
        para="printable bills display empty squares where east asian script should be",
        mixed="printable bills empty squares where kanji should be",
    ),
    dict(
        id="cache-stampede",
        prompt="Every hour at :00 the database spikes to 100% CPU for about a minute.",
        said=[
            "The homepage cache entries all expire on the hour, and hundreds of requests recompute the same expensive query at once.",
            "Adding jitter to the TTL spreads expiry, and a lock so only one request recomputes while others serve the stale value.",
        ],
        final="The hourly database spike is gone: cache TTLs are jittered and a single request refreshes an expired entry while the rest serve the stale copy.",
        kw="cache entries expire hourly spike TTL jitter",
        para="at the top of each clock cycle our storage server is overwhelmed as many visitors regenerate identical content",
        mixed="storage server overwhelmed visitors regenerate identical content",
    ),
    dict(
        id="ssh-key-rotation",
        ident="authorized_keys",
        prompt="A laptop with deploy access was stolen. Rotate whatever it could reach.",
        said=[
            "The laptop held an SSH key authorised on the three bastion hosts and the deploy user on every app server, plus a personal access token for the registry.",
            "Removed the key from authorized_keys everywhere via the config management run, revoked the token, and issued new keys with a 90-day expiry.",
        ],
        final="Revoked everything the stolen laptop could reach: its SSH key is gone from all bastions and app servers, the registry token is revoked, and replacement keys expire after 90 days.",
        kw="stolen laptop SSH key authorized_keys revoke",
        para="a missing notebook computer had production credentials; cut off its privileges",
        mixed="missing notebook computer credentials revoke",
    ),
    dict(
        id="gpu-inference-batch",
        prompt="The image classifier serves 40 requests/s on a GPU that should do far more.",
        said=[
            "Each request runs the model on a single image, so the GPU is busy 8% of the time and mostly waits on transfers.",
            "A micro-batcher that collects requests for up to 10 ms or 32 images, runs them together, and fans the results back out lifts throughput.",
        ],
        final="Added dynamic micro-batching to the classifier (up to 32 images or 10 ms): throughput went from 40 to 610 requests/s with p99 latency at 45 ms.",
        kw="classifier micro-batching GPU throughput",
        para="graphics card sits largely unused because predictions are made one picture after another",
        mixed="graphics card idle predictions one picture at a time",
    ),
    dict(
        id="accessibility-focus",
        prompt="A screen reader user reports they can't get out of the signup dialog with the keyboard.",
        said=[
            "The dialog traps focus but never handles Escape, and the close button is a div without a role or tabindex, so it can't be reached.",
            "Made the close control a real button, handled Escape, and return focus to the element that opened the dialog.",
        ],
        final="The signup dialog is keyboard accessible: Escape closes it, the close control is a focusable button with a label, and focus returns to where it was. Added an axe check to CI.",
        kw="signup dialog keyboard Escape focus screen reader",
        para="blind visitor stuck inside a popup form unable to leave without a mouse",
        mixed="blind visitor stuck inside popup form",
    ),
    dict(
        id="sitemap-seo",
        prompt="Google stopped indexing our new blog posts about a month ago.",
        said=[
            "The sitemap generator crashes on a post with an emoji in its slug, so sitemap.xml has been stale since that post was published.",
            "Percent-encoding slugs in the sitemap and adding a test over every published post fixes the generator.",
        ],
        final="sitemap.xml is current again: the generator percent-encodes slugs, so the post with an emoji no longer breaks it. Resubmitted the sitemap in Search Console.",
        kw="sitemap.xml blog posts indexing emoji slug",
        para="recent articles disappeared from web results for weeks",
        mixed="new articles stopped appearing in results sitemap",
    ),
    dict(
        id="graphql-depth",
        prompt="Someone sent a query nested 40 levels deep (friends of friends of friends...) and it took the API down.",
        said=[
            "Nothing limits query depth or cost, so a single request fans out into millions of resolver calls.",
            "Added a depth limit of 10 and a cost analysis that rejects queries over 5,000 points before execution.",
        ],
        final="The API rejects queries deeper than 10 levels or costing over 5,000 points before running them; the 40-level friends query now gets a clear error in 2 ms.",
        kw="query depth limit cost analysis nested friends",
        para="a heavily recursive lookup about social connections overloaded the server",
        mixed="deeply recursive request social connections overloaded",
    ),
    dict(
        id="backup-restore-test",
        ident="pg_dump",
        prompt="Do our database backups actually restore? Nobody has tried.",
        said=[
            "Tried it: the nightly pg_dump files restore, but the dumps stopped including the audit schema in March when it moved to a separate tablespace.",
            "Fixed the dump flags and added a weekly job that restores the latest backup into a scratch instance and runs row-count checks.",
        ],
        final="Backups restore again in full: pg_dump now includes the audit schema, and a weekly job restores the newest dump into a scratch instance and compares row counts.",
        kw="pg_dump backups restore audit schema weekly",
        para="verify that our safety copies of records can really be brought back",
        mixed="verify safety copies can really be brought back",
    ),
    dict(
        id="monorepo-ci-selective",
        prompt="Every pull request runs all 30 packages' tests, even for a README change. CI queues are hours long.",
        said=[
            "Computing the changed files against the merge base and mapping them through the workspace dependency graph gives the affected packages.",
            "CI now runs only those packages' tests, plus everything on main nightly as a safety net.",
        ],
        final="Pull requests test only the packages their changes affect (via the workspace dependency graph); typical CI time fell from 38 to 6 minutes, and main still runs everything nightly.",
        kw="pull request affected packages dependency graph CI",
        para="only verify the parts of the codebase a proposed edit actually touches",
        mixed="only verify parts a proposed change touches workspace",
    ),
    dict(
        id="s3-presigned",
        prompt="Large video uploads time out because they go through our API servers.",
        said=[
            "The API proxies the whole upload body. Presigned URLs let the browser upload straight to the bucket, with the API only issuing the URL and recording the result.",
            "Multipart presigned uploads handle files over 5 GB and can resume a failed part.",
        ],
        final="Video uploads go directly from the browser to object storage using presigned multipart URLs; the API no longer relays the bytes, and a 6 GB upload completes and resumes after a dropped connection.",
        kw="presigned URLs video uploads bucket multipart",
        para="big clips should travel right from the viewer's machine to cloud hosting, bypassing our backend",
        mixed="big clips straight to cloud storage presigned",
    ),
    dict(
        id="password-hashing",
        prompt="We still hash passwords with SHA-1 plus a salt. Move to something modern without forcing resets.",
        said=[
            "Argon2id with the OWASP parameters for new hashes; existing SHA-1 hashes get rehashed transparently the next time each user logs in successfully.",
            "Wrapping the legacy hash inside Argon2 also lets us upgrade dormant accounts immediately without knowing their passwords.",
        ],
        final="Passwords are hashed with Argon2id; legacy SHA-1 hashes were wrapped in Argon2 so every account is protected now, and they are replaced by plain Argon2id on the next login.",
        kw="Argon2id SHA-1 passwords rehash login",
        para="improve how we keep sign-in secrets with a stronger scheme without making anyone choose fresh ones",
        mixed="stronger scheme for stored user secrets Argon2",
    ),
    dict(
        id="websocket-proxy-timeout",
        ident="ping frame 25 s",
        prompt="Live chat connections drop every 60 seconds exactly.",
        said=[
            "The load balancer closes idle connections after 60 s, and a quiet chat room sends nothing for longer than that.",
            "A ping frame every 25 s keeps the connection alive; the client also reconnects with backoff if it drops anyway.",
        ],
        final="Chat connections stay up: the server pings every 25 seconds to beat the load balancer's 60-second idle timeout, and clients reconnect with backoff after a drop.",
        kw="chat connections drop 60 seconds idle timeout ping",
        para="realtime conversation sockets disconnect once a minute when nobody types",
        mixed="realtime conversation sockets disconnect once a minute",
    ),
    dict(
        id="dependency-vuln",
        ident="/etc/passwd",
        prompt="Dependabot flagged a critical advisory in the XML library. Are we affected?",
        said=[
            "We are: the import endpoint parses customer XML with external entities enabled, so a crafted document could read files from the server (XXE).",
            "Upgraded the library and disabled DTDs and external entities explicitly, in case a later default changes.",
        ],
        final="Patched the XXE exposure: the XML library is upgraded and the import endpoint's parser refuses DTDs and external entities. A test feeds it a document that tries to read /etc/passwd.",
        kw="XXE external entities XML advisory dependabot",
        para="a malicious upload could trick our decoder into leaking local data off the machine",
        mixed="crafted upload tricks parser into reading files",
    ),
    dict(
        id="mobile-offline-sync",
        prompt="Field technicians lose notes they type while out of signal.",
        said=[
            "The app sends each note immediately and drops it if the request fails. Notes should go to a local queue first and sync when connectivity returns.",
            "Each queued note carries a client-generated id, so a retry after a lost response can't create a duplicate on the server.",
        ],
        final="The technician app stores notes locally first and syncs them when a connection returns; client-generated ids make retries idempotent. No note is lost in airplane mode tests.",
        kw="technicians notes offline queue sync idempotent",
        para="workers in remote areas without coverage misplace what they wrote on their handsets",
        mixed="workers without coverage lose what they wrote sync",
    ),
    dict(
        id="locale-number-parse",
        ident="1.234,56",
        prompt="German users entering '1.234,56' get an amount of 1.234 saved.",
        said=[
            "The form parses with parseFloat, which stops at the comma and reads the dot as the decimal separator.",
            "Parsing with the user's locale (Intl.NumberFormat parts to learn the separators) reads 1234.56 correctly.",
        ],
        final="Amount fields parse numbers using the user's locale, so '1.234,56' becomes 1234.56 for German users; tests cover de, fr, en and hi.",
        kw="parseFloat German decimal separator comma amount",
        para="europeans typing sums with their regional punctuation get the figure mangled",
        mixed="europeans typing sums regional punctuation mangled",
    ),
    dict(
        id="cron-overlap",
        ident="flock -n",
        prompt="The data sync job sometimes runs two copies at once and they corrupt each other's output.\n\n"
        + "Here is the crontab and the last week of run logs. " * 5
        + LOG.format(err="sync: output file modified by another writer"),
        said=[
            "The job runs every 10 minutes but sometimes takes 14, so the next run starts while the previous one is still writing.",
            "Wrapping it in flock -n makes a second copy exit immediately if one is running.",
        ],
        final="The sync job holds an exclusive flock while it runs, so overlapping runs exit at once instead of corrupting the output.",
        kw="sync job overlapping runs flock",
        para="a scheduled task begins again before the prior instance finished, clobbering results",
        mixed="scheduled task starts before previous instance finished flock",
    ),
]

# Queries about things no session mentions (nor the generated background sessions).
UNRELATED = [
    "kubernetes helm chart values",
    "xyzzy quux frobnicate",
    "sourdough bread starter hydration",
    "quarterly tax filing deadline",
    "bluetooth headphones pairing problem",
    "wedding seating plan",
    "mars rover telemetry downlink",
    "guitar chord progression in D minor",
    "knitting a wool scarf pattern",
    "chess opening repertoire for black",
    "watering schedule for tomato plants",
    "medieval castle architecture",
    "marathon training plan",
    "how to descale an espresso machine",
    "booking flights to Lisbon",
    "photosynthesis in desert plants",
    "renaissance painting techniques",
    "vintage motorcycle carburetor tuning",
    "birthday party ideas for a toddler",
    "volcano eruption forecasting",
    "sailing knots for beginners",
    "lunar eclipse viewing times",
    "beekeeping hive inspection",
    "translate this poem into latin",
    "snowboard wax temperature",
]
