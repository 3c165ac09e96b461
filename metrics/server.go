package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the registry in Prometheus's text format. A collector
// that fails leaves its series out; the rest of the scrape is served.
// At most 4 scrapes run at once.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
		Timeout:             ScrapeTimeout + 3*time.Second,
	})
}

// Listen opens the metrics listener on addr (METRICS_ADDR): its own, never
// the web's public port. It serves only GET /metrics (404 otherwise) once
// Serve runs.
func (m *Metrics) Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on METRICS_ADDR %s: %w", addr, err)
	}
	return ln, nil
}

// Serve answers scrapes on ln until ctx ends, then shuts the server down
// (an in-flight scrape gets 5 s to finish).
func (m *Metrics) Serve(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("metrics: serve: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics: shut down: %w", err)
	}
	return nil
}
