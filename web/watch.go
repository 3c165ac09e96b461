package web

import "context"

// watchChanges keeps the server's caches in step with the database: the
// cached search results are dropped whenever catalog_changed says a
// process changed the catalog (migration 011), the cached sessions
// whenever auth_changed says one changed users, sessions or messenger links
// (migration 040). Both are dropped whenever the listening connection is
// (re)established, since changes meanwhile went unannounced, and sessions
// are not cached at all while it is down. It returns when ctx ends.
func (s *Server) watchChanges(ctx context.Context) {
	var channels []string
	if s.sessions.ttl > 0 {
		channels = append(channels, "auth_changed")
	}
	if s.searches.ttl > 0 {
		channels = append(channels, "catalog_changed")
	}
	if len(channels) == 0 {
		return
	}
	ready := func() {
		s.searches.forget()
		s.sessions.setListening(true)
	}
	changed := func(channel, _ string) {
		switch channel {
		case "catalog_changed":
			s.searches.forget()
		case "auth_changed":
			s.sessions.forget()
		}
	}
	s.deps.DB.ListenReady(ctx, channels, ready, changed, func(err error) {
		s.sessions.setListening(false)
		s.deps.Logger.Warn("catalog and sign-in changes: listening again shortly", "err", err)
	})
	s.sessions.setListening(false)
}
