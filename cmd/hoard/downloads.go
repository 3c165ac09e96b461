package main

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/hoard/hoard/download"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
)

// newDownloads prepares browser and WebDAV downloads for the web process:
// bytes come through a bot session of the process's own (connected on the
// first download, kept, and made anew after its lease was lost), its
// requests paced across every process by DOWNLOAD_REQUEST_RATE, and
// served chunks kept in $DATA_DIR/download-cache. stop closes the bot.
func (a *app) newDownloads() (svc *download.Service, stop func(), err error) {
	cache, err := download.OpenCache(filepath.Join(a.cfg.DataDir, "download-cache"), a.cfg.DownloadCacheBytes)
	if err != nil {
		return nil, nil, err
	}
	r := &downloadReader{a: a}
	svc = &download.Service{DB: a.db, Reader: r.get, Cache: cache, PerUser: a.cfg.DownloadsPerUser, Log: a.log,
		Observe: a.metrics.DownloadChunk}
	return svc, r.close, nil
}

// downloadReader connects the bot for downloads on first use.
type downloadReader struct {
	a      *app
	mu     sync.Mutex
	reader messenger.FileReader
	closer func()
}

func (r *downloadReader) get(ctx context.Context) (messenger.FileReader, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reader != nil {
		return r.reader, nil
	}
	limiter := messenger.NewSharedLimiter(store.NewPacer(r.a.db), "downloads", r.a.cfg.DownloadRate, max(1, int(r.a.cfg.DownloadRate)))
	b, closeBot, err := r.a.connectBotWith(ctx, limiter, r.lost)
	if err != nil {
		r.a.log.Warn("downloads: the bot cannot connect", "err", err)
		return nil, errDownloadsUnavailable
	}
	r.reader, r.closer = b, closeBot
	return b, nil
}

// lost forgets a bot whose session lease was lost: the next download
// connects anew.
func (r *downloadReader) lost(error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reader, r.closer = nil, nil
}

func (r *downloadReader) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closer != nil {
		r.closer()
	}
	r.reader, r.closer = nil, nil
}
