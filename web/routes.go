package web

import (
	"io/fs"
	"net/http"
	"reflect"
	"strconv"

	"github.com/hoard/hoard"
)

// Access is who may use a route.
type Access int

// Access levels, from open to closed.
const (
	Public   Access = iota // anyone, signed in or not
	SignedIn               // any signed-in user
	Curator                // administrators, or every user when USERS_CAN_CURATE is set
	Admin                  // administrators only
)

// route is one row of the route table.
type route struct {
	Method  string
	Pattern string
	Access  Access
	Handler handlerFunc
	Mount   bool   // Pattern is a prefix served by Handler (any method)
	Doc     string // one line for README's route table
	// Ungated routes skip the admission gate (admission.go): they stream
	// for long (uploads) or must answer at once (health checks, static
	// files). Mounted handlers are never gated.
	Ungated bool
	// Params is the zero value of the struct the route's query and form
	// parameters are decoded into and validated as (params.go) before the
	// handler runs, which reads it with paramsOf; nil for a route that
	// reads none. Every route's parameters pass checkParams either way.
	Params any
	// Tokens marks a route usable with an app token (tokens.go): a
	// request with `Authorization: Bearer <secret>` acts as the token's
	// user. Only GET routes that are not Admin may set it: tokens are
	// read-only and never grant administration (TestTokenRoutes).
	Tokens bool
}

// checked returns the route's handler behind its input checks: clean
// text parameters (checkParams), then its Params decoded and validated.
func (rt route) checked() handlerFunc {
	var params reflect.Type
	if rt.Params != nil {
		params = reflect.TypeOf(rt.Params)
	}
	bounds := declaredBounds(params)
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := checkParams(w, r, bounds); err != nil {
			return err
		}
		if params != nil {
			var err error
			if r, err = bindParams(r, params); err != nil {
				return err
			}
		}
		return rt.Handler(w, r)
	}
}

// routes is the whole route table of the application. The authorization
// test walks it: a route without an expectation there fails the build.
func (s *Server) routes() []route {
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err)
	}
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	rts := []route{
		{Method: http.MethodGet, Pattern: "/", Params: catalogParams{}, Access: Public, Handler: s.handleCatalog, Doc: "Catalog (search, filters, tabs, grid/list); anonymous visitors go to /login"},
		{Method: http.MethodGet, Pattern: "/status", Access: Public, Handler: s.handleStatusPage, Doc: "Status page: version, readiness, schema"},
		{Method: http.MethodGet, Pattern: "/healthz", Access: Public, Ungated: true, Handler: s.handleHealthz, Doc: "200 while the process is up"},
		{Method: http.MethodGet, Pattern: "/readyz", Access: Public, Ungated: true, Handler: s.handleReadyz, Doc: "200 when the database answers and the schema is current, else 503"},
		{Method: http.MethodGet, Pattern: "/static/*", Access: Public, Ungated: true, Doc: "CSS and JavaScript", Handler: func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Cache-Control", "public, max-age=3600")
			files.ServeHTTP(w, r)
			return nil
		}},
		{Method: http.MethodGet, Pattern: "/favicon.ico", Access: Public, Ungated: true, Doc: "The icon (SVG), for clients that ask for it there", Handler: func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Cache-Control", "public, max-age=86400")
			http.ServeFileFS(w, r, static, "favicon.svg")
			return nil
		}},

		{Method: http.MethodGet, Pattern: "/login", Params: loginParams{}, Access: Public, Handler: s.handleLoginForm, Doc: "Sign-in form"},
		{Method: http.MethodPost, Pattern: "/login", Params: loginParams{}, Access: Public, Handler: s.handleLogin, Doc: "Sign in: `email`, `password` → 303, or the form with 401/422/429"},
		{Method: http.MethodGet, Pattern: "/register", Params: registerParams{}, Access: Public, Handler: s.handleRegisterForm, Doc: "Registration form; `?code=` pre-fills the invite code"},
		{Method: http.MethodPost, Pattern: "/register", Params: registerParams{}, Access: Public, Handler: s.handleRegister, Doc: "Register: `code`, `email`, `password` → 303, or the form with 409/422"},
		{Method: http.MethodPost, Pattern: "/logout", Access: SignedIn, Handler: s.handleLogout, Doc: "Sign out"},
		{Method: http.MethodGet, Pattern: "/settings", Access: SignedIn, Handler: s.handleSettings, Doc: "Settings: messenger link card, ways to sign in (identity providers), password"},
		{Method: http.MethodPost, Pattern: "/settings/password", Params: passwordParams{}, Access: SignedIn, Handler: s.handleChangePassword, Doc: "Change password (`current`, `new`; an account made through a provider sets its first one with `new` alone); ends other sessions"},
		{Method: http.MethodPost, Pattern: "/settings/messenger/link-code", Access: SignedIn, Handler: s.handleGenerateLinkCode, Doc: "generateMessengerLinkCode: one-time code + t.me deep link"},
		{Method: http.MethodPost, Pattern: "/settings/messenger/unlink", Access: SignedIn, Handler: s.handleUnlinkMessenger, Doc: "unlinkMessenger"},
		{Method: http.MethodPost, Pattern: "/settings/subscriptions", Access: SignedIn, Handler: s.handleSubscribe, Doc: "Subscribe to new packages matching `pattern` (the bot tells the linked account; matched like the catalog search)"},
		{Method: http.MethodPost, Pattern: "/settings/subscriptions/{id}/delete", Access: SignedIn, Handler: s.handleUnsubscribe, Doc: "Remove one of my subscriptions"},
		{Method: http.MethodPost, Pattern: "/settings/tokens", Params: tokenParams{}, Access: SignedIn, Handler: s.handleCreateToken, Doc: "Create an app token (`name`, 1–64 characters): Settings shows its secret once (201 JSON `{id,name,prefix,created_at,token}` for JSON); 409 past 20 live tokens"},
		{Method: http.MethodPost, Pattern: "/settings/tokens/{id}/revoke", Access: SignedIn, Handler: s.handleRevokeToken, Doc: "Revoke one of my app tokens (an administrator: anyone's); it stops working at once"},
		{Method: http.MethodPost, Pattern: "/settings/sign-in/{provider}/link", Params: linkProviderParams{}, Access: SignedIn, Handler: s.handleLinkProvider, Doc: "Link an account of an identity provider (`oidc`, `github`): 303 to the provider; `current` (the password) lets any account be linked, without it only one whose verified e-mail is the user's; 401/429 for a wrong or throttled password"},
		{Method: http.MethodPost, Pattern: "/settings/sign-in/{provider}/unlink", Access: SignedIn, Handler: s.handleUnlinkProvider, Doc: "Unlink the provider's account; 409 when it is the only way left to sign in"},
		{Method: http.MethodPost, Pattern: "/auth/{provider}/login", Params: providerStartParams{}, Access: Public, Handler: s.handleProviderSignIn, Doc: "Sign in through an identity provider (`next`; `code`: an invite code that lets a first sign-in create an account) → 303 to the provider; 404 for a provider not configured, 422 for an unusable invite, 429 when throttled"},
		{Method: http.MethodGet, Pattern: "/auth/{provider}/callback", Params: callbackParams{}, Access: Public, Handler: s.handleProviderCallback, Doc: "The redirect URL to register at the provider: `state`, `code` (or `error`) → 303 signed in (to `next`) or linked (to Settings); else the sign-in page (Settings for a link) with 401/403/409, 502 when the provider cannot be reached"},

		{Method: http.MethodGet, Pattern: "/creators/{name}", Params: catalogParams{}, Access: SignedIn, Handler: s.handleCreator, Doc: "A creator's page: every package by the creator (the catalog's views, tabs, paging and selection)"},
		{Method: http.MethodGet, Pattern: "/tags/{tag}", Params: catalogParams{}, Access: SignedIn, Handler: s.handleTag, Doc: "A tag's page: every package tagged with it"},
		{Method: http.MethodGet, Pattern: "/packages/{id}", Params: packageParams{}, Access: SignedIn, Handler: s.handlePackage, Doc: "Package page: preview, metadata, file list"},
		{Method: http.MethodGet, Pattern: "/packages/{id}/download", Tokens: true, Params: downloadParams{}, Access: SignedIn, Ungated: true, Handler: s.handleDownloadPackage, Doc: "Download the package from the destination channel, its parts joined back when hoard split it (`part=N`: the N-th volume of a set published as its volumes): `Content-Length`, `ETag`, single `Range` → 206; 429 past `DOWNLOADS_PER_USER` at once, 404 when a post is gone, 503 when the bot cannot connect"},
		{Method: http.MethodGet, Pattern: "/packages/download", Tokens: true, Params: idsParams{}, Access: SignedIn, Ungated: true, Handler: s.handleDownloadSelection, Doc: "Download the selected packages (`id`…, ≤ 500): one ZIP of them (stored entries, ZIP64 where needed, `Content-Length` up front, `Range`), or the package itself when one is selected"},
		{Method: http.MethodGet, Pattern: "/packages/{id}/preview", Access: SignedIn, Handler: s.handlePackagePreview, Doc: "Package preview image"},
		{Method: http.MethodPost, Pattern: "/packages/tags", Params: tagsParams{}, Access: Curator, Handler: s.handleEditTags, Doc: "Edit tags of one or many packages (`id`…, `mode` set/add/remove, `tags`: ≤ 64 of ≤ 64 characters; a package keeps ≤ 64)"},
		{Method: http.MethodPost, Pattern: "/packages/creator", Params: creatorParams{}, Access: Curator, Handler: s.handleSetCreator, Doc: "Set the creator of one or many packages (`id`…, `creator`)"},
		{Method: http.MethodPost, Pattern: "/packages/send", Params: sendToMeParams{}, Access: SignedIn, Handler: s.handleSendToMe, Doc: "Send selected packages (`id`…) to my messenger account"},
		{Method: http.MethodPost, Pattern: "/packages/{id}/repair", Access: Admin, Handler: s.handleRepairPackage, Doc: "Repair a package: queue `repair_package` (re-download and re-publish into the same row) → 303, or 202 JSON"},
		{Method: http.MethodPost, Pattern: "/packages/{id}/preview", Access: Curator, Handler: s.handleSetPackagePreview, Doc: "Upload a custom package preview (`image`: JPEG, PNG, GIF or WebP, ≤ 2 MiB): re-encoded like every preview to a JPEG of at most 800 pixels; 422 naming the limit for an image over 24 megapixels or 16,384 pixels a side (refused before decoding) or a WebP over 800 pixels"},
		{Method: http.MethodPost, Pattern: "/packages/{id}/preview/extract", Params: extractParams{}, Access: Curator, Handler: s.handleExtractPreview, Doc: "Choose the preview from the archive (`entry`: an image entry's path): extraction row + `extract_preview` job in one transaction → 202 `{extraction,queued}` (the unfinished one for the same entry: `queued` false), or 303 to the package page; 422 for entries that are not listed images ≤ 10 MiB, 409 when not published"},
		{Method: http.MethodPost, Pattern: "/skipped/{id}/retry", Access: Admin, Handler: s.handleRetrySkipped, Doc: "Retry a skipped source message (Skipped tab): queue `retry_skipped` → 303 to the tab, or 202 JSON"},
		{Method: http.MethodPost, Pattern: "/groups", Params: createGroupParams{}, Access: Curator, Handler: s.handleCreateGroup, Doc: "Create a manual group from packages (`id`…, `name`); trains a rule"},
		{Method: http.MethodGet, Pattern: "/groups/{id}", Access: SignedIn, Handler: s.handleGroup, Doc: "Group page"},
		{Method: http.MethodGet, Pattern: "/groups/{id}/preview", Access: SignedIn, Handler: s.handleGroupPreview, Doc: "Group preview image"},
		{Method: http.MethodPost, Pattern: "/groups/{id}/preview", Access: Curator, Handler: s.handleSetGroupPreview, Doc: "Upload a group preview (`image`, as for a package)"},
		{Method: http.MethodPost, Pattern: "/groups/{id}/rename", Params: renameGroupParams{}, Access: Curator, Handler: s.handleRenameGroup, Doc: "Rename a group (`name`)"},
		{Method: http.MethodPost, Pattern: "/groups/{id}/packages/{packageId}/remove", Access: Curator, Handler: s.handleRemoveFromGroup, Doc: "Remove a package from a group (it stays ungrouped)"},
		{Method: http.MethodPost, Pattern: "/groups/{id}/rules", Access: Curator, Handler: s.handleLearnDeclinedRule, Doc: "Learn the rule that learning declined for a manual group (it also matches packages of other groups): rule + `group_channel` job in one transaction"},
		{Method: http.MethodPost, Pattern: "/groups/{id}/rules/{ruleId}/delete", Access: Curator, Handler: s.handleDeleteGroupRule, Doc: "Remove a learned rule of a group (its packages stay)"},
		{Method: http.MethodPost, Pattern: "/groups/{id}/dissolve", Access: Curator, Handler: s.handleDissolveGroup, Doc: "Dissolve a group"},
		{Method: http.MethodPost, Pattern: "/groups/{id}/merge/start", Access: Curator, Handler: s.handleStartMerge, Doc: "Start merge here: this group is the source"},
		{Method: http.MethodPost, Pattern: "/groups/{id}/merge", Params: mergeParams{}, Access: Curator, Handler: s.handleMergeHere, Doc: "mergeGroupsAction: merge the source (`source` or the started merge) here"},
		{Method: http.MethodGet, Pattern: "/groups/{id}/download", Tokens: true, Access: SignedIn, Ungated: true, Handler: s.handleDownloadGroup, Doc: "Download every published package of a group as one ZIP (as for a selection)"},
		{Method: http.MethodPost, Pattern: "/groups/{id}/send", Access: SignedIn, Handler: s.handleSendGroup, Doc: "Send every package of a group to my messenger account"},
		{Method: http.MethodGet, Pattern: "/crowdfunds", Params: crowdfundsParams{}, Access: SignedIn, Handler: s.handleCrowdfunds, Doc: "My crowdfund records (filters `delivery`, `payment`, `host`)"},
		{Method: http.MethodPost, Pattern: "/crowdfunds", Params: crowdfundForm{}, Access: SignedIn, Handler: s.handleCreateCrowdfund, Doc: "Create a record"},
		{Method: http.MethodGet, Pattern: "/crowdfunds/{id}", Params: searchParams{}, Access: SignedIn, Handler: s.handleCrowdfund, Doc: "A record: edit, linked packages, linking search (`q`)"},
		{Method: http.MethodPost, Pattern: "/crowdfunds/{id}", Params: crowdfundForm{}, Access: SignedIn, Handler: s.handleUpdateCrowdfund, Doc: "Update a record"},
		{Method: http.MethodPost, Pattern: "/crowdfunds/{id}/delete", Access: SignedIn, Handler: s.handleDeleteCrowdfund, Doc: "Delete a record"},
		{Method: http.MethodPost, Pattern: "/crowdfunds/{id}/packages", Params: idsParams{}, Access: SignedIn, Handler: s.handleLinkCrowdfundPackages, Doc: "Link packages (`id`…)"},
		{Method: http.MethodPost, Pattern: "/crowdfunds/{id}/packages/{packageId}/delete", Access: SignedIn, Handler: s.handleUnlinkCrowdfundPackage, Doc: "Unlink a package"},
		{Method: http.MethodGet, Pattern: "/crowdfunds/{id}/download", Tokens: true, Access: SignedIn, Ungated: true, Handler: s.handleDownloadCrowdfund, Doc: "Download every published package linked to my record as one ZIP"},
		{Method: http.MethodPost, Pattern: "/crowdfunds/{id}/send-all", Access: SignedIn, Handler: s.handleSendAllCrowdfund, Doc: "sendAllCrowdfundPackages"},
		{Method: http.MethodGet, Pattern: "/api/crowdfunds/{id}/packages/search", Params: searchParams{}, Access: SignedIn, Tokens: true, Handler: s.handleAPICrowdfundPackageSearch, Doc: "Linking dialog search: `{items:[{id,file_name,creator,linked}]}`"},
		{Method: http.MethodGet, Pattern: "/uploads", Access: SignedIn, Handler: s.handleUploads, Doc: "Upload form and my uploads"},
		{Method: http.MethodGet, Pattern: "/uploads/{id}", Access: SignedIn, Handler: s.handleUploadPage, Doc: "An upload's status page (polls the API)"},
		{Method: http.MethodPost, Pattern: "/api/uploads", Access: SignedIn, Ungated: true, Handler: s.handleAPIUpload, Doc: "Manual upload: multipart `files` (+ `group_name`) streamed to UPLOAD_DIR → 201 upload JSON; 413 past the user's `UPLOAD_QUOTA_BYTES` (says what is left), 507 below `UPLOAD_MIN_FREE_BYTES` free"},
		{Method: http.MethodPost, Pattern: "/uploads/{id}/retry", Access: SignedIn, Handler: s.handleRetryUpload, Doc: "Retry an upload's failed files (kept on the volume): back to PENDING + `manual_upload` job → 303 to its page, or 202 JSON"},
		{Method: http.MethodPost, Pattern: "/uploads/{id}/delete", Access: SignedIn, Handler: s.handleDeleteUpload, Doc: "Delete a finished upload (owner or administrator): its files leave the volume, its rows go, its packages stay → 303 to /uploads, or 200 JSON; 409 while it is processed"},
		{Method: http.MethodGet, Pattern: "/api/uploads/{id}", Access: SignedIn, Tokens: true, Handler: s.handleAPIUploadStatus, Doc: "Upload status: `{id,status,phase,files:[…]}` (phase upload/processing/complete)"},
		{Method: http.MethodGet, Pattern: "/api/openapi.json", Access: Public, Tokens: true, Handler: s.handleOpenAPI, Doc: "OpenAPI 3.1 description of the API (every `/api/` route), made from this table: parameters, bounds, access, which routes take app tokens"},
		{Method: http.MethodGet, Pattern: "/api/packages", Params: catalogParams{}, Access: SignedIn, Tokens: true, Handler: s.handleAPIPackages, Doc: "Search: `q`, `creator`, `tag`… (prefixes, any case), `channel`, `type`, `preview`, `tab`, `sort` (relevance, newest, name, size), `limit`, `after` → `{items,next,mode,sort,capped,count,count_exact}`; items carry `files_matched`, `matched_paths`"},
		{Method: http.MethodPost, Pattern: "/api/messenger/bot/send", Params: idsParams{}, Access: SignedIn, Handler: s.handleAPIBotSend, Doc: "Queue delivery: JSON `{package_id}`, `{package_ids}` or `{group_id}`, optional `user_id` → 202 `{requests}`"},
		{Method: http.MethodGet, Pattern: "/api/messenger/bot/send/{id}", Access: SignedIn, Tokens: true, Handler: s.handleAPIBotSendStatus, Doc: "A send request's status"},
		{Method: http.MethodGet, Pattern: "/api/messenger/bot/sends", Access: Admin, Handler: s.handleBotSendHistory, Doc: "getBotSendHistory: the last 50 deliveries with status and parts sent, and the bot's status"},
		{Method: http.MethodGet, Pattern: "/api/messenger/bot/my-sends", Access: SignedIn, Tokens: true, Handler: s.handleMySends, Doc: "My last 20 deliveries with status and parts sent (Settings polls it)"},
		{Method: http.MethodGet, Pattern: "/api/packages/new", Params: newPackagesParams{}, Access: SignedIn, Tokens: true, Handler: s.handleNewPackages, Doc: "Polled by the catalog: `since` (a package id) → `{newest_id,new,capped,running}`, packages indexed since the page loaded"},
		{Method: http.MethodGet, Pattern: "/api/packages/{id}", Access: SignedIn, Tokens: true, Handler: s.handleAPIPackage, Doc: "A package as JSON"},
		{Method: http.MethodGet, Pattern: "/api/packages/{id}/files", Params: filesParams{}, Access: SignedIn, Tokens: true, Handler: s.handleAPIPackageFiles, Doc: "Archive entries: `q` (a substring of the path, ≤ 200 characters), `after`, `limit` (1–1000) → `{items,next}`"},
		{Method: http.MethodGet, Pattern: "/api/packages/{id}/preview", Access: SignedIn, Tokens: true, Handler: s.handlePackagePreview, Doc: "Package preview image"},
		{Method: http.MethodGet, Pattern: "/api/packages/{id}/preview/extract/{extractionId}", Access: SignedIn, Tokens: true, Handler: s.handleExtractionStatus, Doc: "A preview extraction, polled by the package page: `{extraction:{status PENDING/RUNNING/DONE/FAILED,method,bytes_downloaded,error_message,preview_url,…}}`"},

		{Method: http.MethodGet, Pattern: "/notifications", Params: notificationsParams{}, Access: Admin, Handler: s.handleNotifications, Doc: "Notifications page"},
		{Method: http.MethodGet, Pattern: "/api/notifications", Params: notificationsParams{}, Access: Admin, Handler: s.handleAPINotifications, Doc: "Bell: `{items,unread,next}` (`before` pages)"},
		{Method: http.MethodPost, Pattern: "/api/notifications/read-all", Access: Admin, Handler: s.handleReadAllNotifications, Doc: "Mark every notification read"},
		{Method: http.MethodPost, Pattern: "/api/notifications/clear", Access: Admin, Handler: s.handleClearNotifications, Doc: "Dismiss every notification (Clear all)"},
		{Method: http.MethodPost, Pattern: "/api/notifications/repair", Params: repairForm{}, Access: Admin, Handler: s.handleRepairNotification, Doc: "repairPackageAction: JSON `{notification_id}` (or form) of a MISSING_PART/HASH_MISMATCH notification → queue `repair_package`, mark read → 202 `{job_id,package_id,queued}`"},
		{Method: http.MethodPost, Pattern: "/api/notifications/{id}/read", Access: Admin, Handler: s.handleReadNotification, Doc: "Mark one read"},
		{Method: http.MethodPost, Pattern: "/api/notifications/{id}/dismiss", Access: Admin, Handler: s.handleDismissNotification, Doc: "Dismiss one"},

		{Method: http.MethodGet, Pattern: "/admin/messenger", Access: Admin, Handler: s.handleMessengerAdmin, Doc: "Messaging admin: worker panel, rebuild from destination, channels, bot sends, accounts"},
		{Method: http.MethodPost, Pattern: "/admin/messenger/channels/{channelId}", Params: channelParams{}, Access: Admin, Handler: s.handleUpdateChannel, Doc: "Channel settings (`category`, `active`, `auto_group`); a new category re-tags its packages"},
		{Method: http.MethodPost, Pattern: "/admin/messenger/channels/{channelId}/rescan", Access: Admin, Handler: s.handleRescanChannel, Doc: "Rescan a source channel from its first message: queue `rescan_channel` → 303, or 202 JSON"},
		{Method: http.MethodGet, Pattern: "/admin/messenger/channels/{channelId}", Access: Admin, Handler: s.handleChannelPage, Doc: "A channel with its forum topics and fetch toggles"},
		{Method: http.MethodPost, Pattern: "/admin/messenger/joins", Params: joinParams{}, Access: Admin, Handler: s.handleJoinChannel, Doc: "Add a source channel by link, @username or invite link (`ref`, `account_id`, `category`): request row + `join_channel` job in one transaction → 303, or 202 JSON `{join,created}`; once joined, a new channel is scanned at once (after a running cycle), not at the next scheduled cycle; a channel hoard has already, with another category or the same account, is refused beside the field (409) with a link to its settings"},
		{Method: http.MethodGet, Pattern: "/api/messenger/joins", Access: Admin, Handler: s.handleAPIJoins, Doc: "Latest channel join requests with their outcome (PENDING, JOINED, REQUEST_SENT, NOT_FOUND, FAILED): `{items,pending}`"},
		{Method: http.MethodPost, Pattern: "/admin/messenger/destination", Params: destinationParams{}, Access: Admin, Handler: s.handleSetDestination, Doc: "Choose the destination channel and the account that posts to it (`choice` = `channel:account`, or `channel_id`, `account_id`); its map becomes the WRITER map"},
		{Method: http.MethodPost, Pattern: "/admin/messenger/accounts", Params: addAccountParams{}, Access: Admin, Handler: s.handleAddAccount, Doc: "Add a messenger account by phone (`phone`, E.164) and queue `account_login` (a code is sent) in one transaction"},
		{Method: http.MethodGet, Pattern: "/api/messenger/accounts", Access: Admin, Handler: s.handleAPIAccounts, Doc: "Accounts with sign-in state, error, Premium flag: `{items,busy}` (no secrets)"},
		{Method: http.MethodPost, Pattern: "/admin/messenger/accounts/{accountId}/login", Access: Admin, Handler: s.handleAccountLogin, Doc: "Log an account in again: back to PENDING, secrets in flight forgotten, `account_login` queued"},
		{Method: http.MethodPost, Pattern: "/admin/messenger/accounts/{accountId}/delete", Access: Admin, Handler: s.handleRemoveAccount, Doc: "Remove an account that is not signed in (a failed or abandoned login) with its channel settings and stored session; 409 for a signed-in one"},
		{Method: http.MethodPost, Pattern: "/admin/messenger/accounts/{accountId}/code", Params: accountCodeParams{}, Access: Admin, Handler: s.handleAccountCode, Doc: "Submit the login code (`code`): sealed with AUTH_SECRET on the account + `account_sign_in` job; 409 unless AWAITING_CODE"},
		{Method: http.MethodPost, Pattern: "/admin/messenger/accounts/{accountId}/password", Params: accountPasswordParams{}, Access: Admin, Handler: s.handleAccountPassword, Doc: "Submit the two-step verification password (`password`), sealed like the code; 409 unless AWAITING_PASSWORD"},
		{Method: http.MethodGet, Pattern: "/api/messenger/channels/{channelId}/topics", Access: Admin, Handler: s.handleAPIChannelTopics, Doc: "Per-topic fetch state `{channel_id,is_forum,topics:[…]}`"},
		{Method: http.MethodPost, Pattern: "/api/messenger/channels/{channelId}/topics/{topicId}", Params: topicFetchParams{}, Access: Admin, Handler: s.handleSetTopicFetch, Doc: "Set a topic's fetch flag (`fetch_enabled`)"},
		{Method: http.MethodGet, Pattern: "/api/ingestion/status", Access: Admin, Handler: s.handleIngestionStatus, Doc: "Worker panel: running run, last run (counters: found = new + duplicates + skipped + held back), the files in flight (phase, part k of N, bytes, rate, time left), the forum topics in progress, interval, next cycle"},
		{Method: http.MethodPost, Pattern: "/api/ingestion/trigger", Access: Admin, Handler: s.handleTriggerIngestion, Doc: "triggerIngestion: queue a manual `ingest_cycle` and notify `ingestion_trigger` in one transaction → 202 `{job_id,queued}` (`queued` false while a cycle is pending), or 303 for the page's form"},
		{Method: http.MethodPost, Pattern: "/api/ingestion/disable-active-topic", Params: activeTopicParams{}, Access: Admin, Handler: s.handleDisableActiveTopic, Doc: "disableActiveTopic (`account_channel_map_id`, `topic_id`): stop fetching that topic in progress → 303 with a notice, or 200 JSON (409 when it is not in progress)"},
		{Method: http.MethodPost, Pattern: "/admin/messenger/rebuild", Access: Admin, Handler: s.handleStartRebuild, Doc: "Rebuild the catalog from the destination channel: run row + job in one transaction → 303 (202 `{run}` for JSON); 409 while one runs or without a destination"},
		{Method: http.MethodGet, Pattern: "/api/rebuild/status", Access: Admin, Handler: s.handleRebuildStatus, Doc: "Latest rebuild from the destination: `{run}` with status, counters, resume point, error (null when none ran)"},

		{Method: http.MethodGet, Pattern: "/admin/invites", Access: Admin, Handler: s.handleInvites, Doc: "Invites page"},
		{Method: http.MethodPost, Pattern: "/admin/invites", Params: invitesParams{}, Access: Admin, Handler: s.handleCreateInvites, Doc: "Create invite codes (`count`, `max_uses`, `expires_days`)"},
		{Method: http.MethodPost, Pattern: "/admin/invites/{id}/delete", Access: Admin, Handler: s.handleDeleteInvite, Doc: "Delete an invite code"},
	}
	rts = append(rts, route{Pattern: davPrefix, Access: Public, Mount: true, Handler: s.handleDAV,
		Doc: "Read-only WebDAV of the catalog (`creators/`, `groups/`, `tags/`, `latest/`, each package's files inside): Basic auth with an app token as the password (any user name), or a signed-in session; GET streams as the download route does, with `Range`; every write method 405"})
	if s.riverUI != nil {
		rts = append(rts, route{Pattern: riverUIPrefix, Access: Admin, Mount: true, Doc: "River UI: queues and jobs",
			Handler: func(w http.ResponseWriter, r *http.Request) error {
				if err := checkRiverUIParams(r); err != nil {
					return err
				}
				s.riverUI.ServeHTTP(w, r)
				return nil
			}})
	}
	return rts
}

// String names an access level for documentation.
func (a Access) String() string {
	return [...]string{"public", "signed in", "curator", "admin"}[a]
}

// checkRiverUIParams refuses what the River UI (v0.17.0) does not: its job
// list takes limit=0 (or less) and then panics (river's JobListParams.First).
func checkRiverUIParams(r *http.Request) error {
	if l := r.URL.Query().Get("limit"); l != "" {
		if n, err := strconv.Atoi(l); err != nil || n < 1 || n > 1000 {
			return hoard.Errorf(hoard.EINVALID, "limit must be 1–1000.")
		}
	}
	return nil
}
