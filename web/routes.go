package web

import "net/http"

// Access is who may use a route.
type Access int

// Access levels.
const (
	Public Access = iota // anyone, signed in or not
)

// route is one row of the route table.
type route struct {
	Method  string
	Pattern string
	Access  Access
	Handler handlerFunc
}

// routes is the whole route table of the application.
func (s *Server) routes() []route {
	return []route{
		{http.MethodGet, "/", Public, s.handleStatusPage},
		{http.MethodGet, "/healthz", Public, s.handleHealthz},
		{http.MethodGet, "/readyz", Public, s.handleReadyz},
	}
}
