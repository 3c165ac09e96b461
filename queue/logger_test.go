package queue

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestRiverLoggerDemotesInfo(t *testing.T) {
	var buf bytes.Buffer
	l := logger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	l.Info("producer: job counts")
	l.Warn("elector: lost leadership")
	l.With("queue", "ingest").Error("job failed")
	out := buf.String()
	if strings.Contains(out, "job counts") {
		t.Errorf("an INFO record of River reached the INFO log: %s", out)
	}
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "lost leadership") || !strings.Contains(out, "queue=ingest") {
		t.Errorf("warnings and errors must pass with their attributes: %s", out)
	}
	buf.Reset()
	debug := logger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	debug.Info("producer: job counts")
	if !strings.Contains(buf.String(), "level=DEBUG") {
		t.Errorf("at LOG_LEVEL=debug River's INFO shows as DEBUG: %s", buf.String())
	}
}
