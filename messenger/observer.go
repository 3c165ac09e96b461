package messenger

import "time"

// RequestObserver is told about one client's traffic with the platform (an
// account's, or the bot's): the adapter calls it for every request it
// sends. It must be safe for concurrent use and quick, since it runs in
// the request's goroutine. metrics.Platform implements it.
type RequestObserver interface {
	// Request is one attempt at a request, by its TL method name, told as
	// the account's Limiter counts it: before the attempt waits for its
	// turn (so one whose context ends meanwhile counts too), again for a
	// retry after a flood wait.
	Request(method string)
	// FloodWait is a FLOOD_WAIT answer to method asking to wait.
	FloodWait(method string, wait time.Duration)
	// Downloaded and Uploaded are file bytes received and sent (download
	// chunks, upload parts).
	Downloaded(bytes int64)
	Uploaded(bytes int64)
}

// NoObserver is a RequestObserver that observes nothing.
type NoObserver struct{}

// Request implements RequestObserver.
func (NoObserver) Request(string) {}

// FloodWait implements RequestObserver.
func (NoObserver) FloodWait(string, time.Duration) {}

// Downloaded implements RequestObserver.
func (NoObserver) Downloaded(int64) {}

// Uploaded implements RequestObserver.
func (NoObserver) Uploaded(int64) {}
