package web

import (
	"context"
	"net/http"
	"time"
)

// handleHealthz answers 200 while the process is up.
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readiness is the body of /readyz.
type readiness struct {
	Status        string `json:"status"`
	Database      string `json:"database"`
	SchemaVersion int32  `json:"schema_version"`
	SchemaLatest  int32  `json:"schema_latest"`
	Error         string `json:"error,omitempty"`
}

// handleReadyz answers 200 when the database answers and its schema is
// current, 503 otherwise.
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) error {
	rd := s.readiness(r.Context())
	status := http.StatusOK
	if rd.Status != "ok" {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, rd)
	return nil
}

func (s *Server) readiness(ctx context.Context) readiness {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := s.deps.DB.Ping(ctx); err != nil {
		s.deps.Logger.Warn("readiness: database unreachable", "err", err)
		return readiness{Status: "unavailable", Database: "unreachable", Error: "database unreachable"}
	}
	st, err := s.deps.DB.SchemaStatus(ctx)
	if err != nil {
		s.deps.Logger.Warn("readiness: schema status", "err", err)
		return readiness{Status: "unavailable", Database: "ok", Error: "schema status unavailable"}
	}
	rd := readiness{Status: "ok", Database: "ok", SchemaVersion: st.Current, SchemaLatest: st.Latest}
	if !st.UpToDate() {
		rd.Status, rd.Error = "unavailable", "migrations pending"
	}
	return rd
}

// handleStatusPage renders the landing page: what is running and whether it
// is ready. The catalog replaces it as the application grows.
func (s *Server) handleStatusPage(w http.ResponseWriter, r *http.Request) error {
	return s.render(w, r, http.StatusOK, "status", page{Title: "Status", Data: map[string]any{
		"Version": s.deps.Version, "Database": s.deps.Database, "Ready": s.readiness(r.Context()),
		"Uptime": time.Since(s.deps.Started).Round(time.Second).String(),
	}})
}
