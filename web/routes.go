package web

import (
	"io/fs"
	"net/http"
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
	Mount   bool // Pattern is a prefix served by Handler (any method)
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
		{Method: http.MethodGet, Pattern: "/", Access: Public, Handler: s.handleCatalog},
		{Method: http.MethodGet, Pattern: "/status", Access: Public, Handler: s.handleStatusPage},
		{Method: http.MethodGet, Pattern: "/healthz", Access: Public, Handler: s.handleHealthz},
		{Method: http.MethodGet, Pattern: "/readyz", Access: Public, Handler: s.handleReadyz},
		{Method: http.MethodGet, Pattern: "/static/*", Access: Public, Handler: func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Cache-Control", "public, max-age=3600")
			files.ServeHTTP(w, r)
			return nil
		}},

		{Method: http.MethodGet, Pattern: "/login", Access: Public, Handler: s.handleLoginForm},
		{Method: http.MethodPost, Pattern: "/login", Access: Public, Handler: s.handleLogin},
		{Method: http.MethodGet, Pattern: "/register", Access: Public, Handler: s.handleRegisterForm},
		{Method: http.MethodPost, Pattern: "/register", Access: Public, Handler: s.handleRegister},
		{Method: http.MethodPost, Pattern: "/logout", Access: SignedIn, Handler: s.handleLogout},
		{Method: http.MethodGet, Pattern: "/settings", Access: SignedIn, Handler: s.handleSettings},
		{Method: http.MethodPost, Pattern: "/settings/password", Access: SignedIn, Handler: s.handleChangePassword},
		{Method: http.MethodPost, Pattern: "/settings/messenger/link-code", Access: SignedIn, Handler: s.handleGenerateLinkCode},
		{Method: http.MethodPost, Pattern: "/settings/messenger/unlink", Access: SignedIn, Handler: s.handleUnlinkMessenger},

		{Method: http.MethodGet, Pattern: "/packages/{id}", Access: SignedIn, Handler: s.handlePackage},
		{Method: http.MethodGet, Pattern: "/packages/{id}/preview", Access: SignedIn, Handler: s.handlePackagePreview},
		{Method: http.MethodPost, Pattern: "/packages/tags", Access: Curator, Handler: s.handleEditTags},
		{Method: http.MethodPost, Pattern: "/packages/creator", Access: Curator, Handler: s.handleSetCreator},
		{Method: http.MethodPost, Pattern: "/packages/send", Access: SignedIn, Handler: s.handleSendToMe},
		{Method: http.MethodPost, Pattern: "/packages/{id}/preview", Access: Curator, Handler: s.handleSetPackagePreview},
		{Method: http.MethodPost, Pattern: "/groups", Access: Curator, Handler: s.handleCreateGroup},
		{Method: http.MethodGet, Pattern: "/groups/{id}", Access: SignedIn, Handler: s.handleGroup},
		{Method: http.MethodGet, Pattern: "/groups/{id}/preview", Access: SignedIn, Handler: s.handleGroupPreview},
		{Method: http.MethodPost, Pattern: "/groups/{id}/preview", Access: Curator, Handler: s.handleSetGroupPreview},
		{Method: http.MethodPost, Pattern: "/groups/{id}/rename", Access: Curator, Handler: s.handleRenameGroup},
		{Method: http.MethodPost, Pattern: "/groups/{id}/packages/{packageId}/remove", Access: Curator, Handler: s.handleRemoveFromGroup},
		{Method: http.MethodPost, Pattern: "/groups/{id}/dissolve", Access: Curator, Handler: s.handleDissolveGroup},
		{Method: http.MethodPost, Pattern: "/groups/{id}/merge/start", Access: Curator, Handler: s.handleStartMerge},
		{Method: http.MethodPost, Pattern: "/groups/{id}/merge", Access: Curator, Handler: s.handleMergeHere},
		{Method: http.MethodPost, Pattern: "/groups/{id}/send", Access: SignedIn, Handler: s.handleSendGroup},
		{Method: http.MethodGet, Pattern: "/crowdfunds", Access: SignedIn, Handler: s.handleCrowdfunds},
		{Method: http.MethodPost, Pattern: "/crowdfunds", Access: SignedIn, Handler: s.handleCreateCrowdfund},
		{Method: http.MethodGet, Pattern: "/crowdfunds/{id}", Access: SignedIn, Handler: s.handleCrowdfund},
		{Method: http.MethodPost, Pattern: "/crowdfunds/{id}", Access: SignedIn, Handler: s.handleUpdateCrowdfund},
		{Method: http.MethodPost, Pattern: "/crowdfunds/{id}/delete", Access: SignedIn, Handler: s.handleDeleteCrowdfund},
		{Method: http.MethodPost, Pattern: "/crowdfunds/{id}/packages", Access: SignedIn, Handler: s.handleLinkCrowdfundPackages},
		{Method: http.MethodPost, Pattern: "/crowdfunds/{id}/packages/{packageId}/delete", Access: SignedIn, Handler: s.handleUnlinkCrowdfundPackage},
		{Method: http.MethodPost, Pattern: "/crowdfunds/{id}/send-all", Access: SignedIn, Handler: s.handleSendAllCrowdfund},
		{Method: http.MethodGet, Pattern: "/api/crowdfunds/{id}/packages/search", Access: SignedIn, Handler: s.handleAPICrowdfundPackageSearch},
		{Method: http.MethodGet, Pattern: "/uploads", Access: SignedIn, Handler: s.handleUploads},
		{Method: http.MethodGet, Pattern: "/uploads/{id}", Access: SignedIn, Handler: s.handleUploadPage},
		{Method: http.MethodPost, Pattern: "/api/uploads", Access: SignedIn, Handler: s.handleAPIUpload},
		{Method: http.MethodGet, Pattern: "/api/uploads/{id}", Access: SignedIn, Handler: s.handleAPIUploadStatus},
		{Method: http.MethodGet, Pattern: "/api/packages", Access: SignedIn, Handler: s.handleAPIPackages},
		{Method: http.MethodPost, Pattern: "/api/messenger/bot/send", Access: SignedIn, Handler: s.handleAPIBotSend},
		{Method: http.MethodGet, Pattern: "/api/messenger/bot/send/{id}", Access: SignedIn, Handler: s.handleAPIBotSendStatus},
		{Method: http.MethodGet, Pattern: "/api/messenger/bot/sends", Access: Admin, Handler: s.handleBotSendHistory},
		{Method: http.MethodGet, Pattern: "/api/packages/{id}", Access: SignedIn, Handler: s.handleAPIPackage},
		{Method: http.MethodGet, Pattern: "/api/packages/{id}/files", Access: SignedIn, Handler: s.handleAPIPackageFiles},
		{Method: http.MethodGet, Pattern: "/api/packages/{id}/preview", Access: SignedIn, Handler: s.handlePackagePreview},

		{Method: http.MethodGet, Pattern: "/notifications", Access: Admin, Handler: s.handleNotifications},
		{Method: http.MethodGet, Pattern: "/api/notifications", Access: Admin, Handler: s.handleAPINotifications},
		{Method: http.MethodPost, Pattern: "/api/notifications/read-all", Access: Admin, Handler: s.handleReadAllNotifications},
		{Method: http.MethodPost, Pattern: "/api/notifications/clear", Access: Admin, Handler: s.handleClearNotifications},
		{Method: http.MethodPost, Pattern: "/api/notifications/{id}/read", Access: Admin, Handler: s.handleReadNotification},
		{Method: http.MethodPost, Pattern: "/api/notifications/{id}/dismiss", Access: Admin, Handler: s.handleDismissNotification},

		{Method: http.MethodGet, Pattern: "/admin/messenger", Access: Admin, Handler: s.handleMessengerAdmin},
		{Method: http.MethodPost, Pattern: "/admin/messenger/channels/{channelId}", Access: Admin, Handler: s.handleUpdateChannel},
		{Method: http.MethodGet, Pattern: "/admin/messenger/channels/{channelId}", Access: Admin, Handler: s.handleChannelPage},
		{Method: http.MethodGet, Pattern: "/api/messenger/channels/{channelId}/topics", Access: Admin, Handler: s.handleAPIChannelTopics},
		{Method: http.MethodPost, Pattern: "/api/messenger/channels/{channelId}/topics/{topicId}", Access: Admin, Handler: s.handleSetTopicFetch},
		{Method: http.MethodGet, Pattern: "/api/ingestion/status", Access: Admin, Handler: s.handleIngestionStatus},
		{Method: http.MethodPost, Pattern: "/api/ingestion/disable-active-topic", Access: Admin, Handler: s.handleDisableActiveTopic},

		{Method: http.MethodGet, Pattern: "/admin/invites", Access: Admin, Handler: s.handleInvites},
		{Method: http.MethodPost, Pattern: "/admin/invites", Access: Admin, Handler: s.handleCreateInvites},
		{Method: http.MethodPost, Pattern: "/admin/invites/{id}/delete", Access: Admin, Handler: s.handleDeleteInvite},
	}
	if s.riverUI != nil {
		rts = append(rts, route{Pattern: "/admin/river", Access: Admin, Mount: true,
			Handler: func(w http.ResponseWriter, r *http.Request) error { s.riverUI.ServeHTTP(w, r); return nil }})
	}
	return rts
}
