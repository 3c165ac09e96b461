package messengertest

import (
	"bytes"
	"io"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/telegram"
)

// observed is a messenger.RequestObserver that keeps what it heard.
type observed struct {
	mu       sync.Mutex
	requests map[string]int
	floods   map[string]time.Duration
	down, up int64
}

func newObserved() *observed {
	return &observed{requests: map[string]int{}, floods: map[string]time.Duration{}}
}

func (o *observed) Request(method string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests[method]++
}

func (o *observed) FloodWait(method string, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.floods[method] += d
}

func (o *observed) Downloaded(n int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.down += n
}

func (o *observed) Uploaded(n int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.up += n
}

var _ messenger.RequestObserver = (*observed)(nil)

// TestObserverHearsEveryRequest downloads and uploads through an account
// with an observer, a flood wait slept through in place on the way, and
// compares what the observer heard with the emulator's own call counters
// and the files' sizes.
func TestObserverHearsEveryRequest(t *testing.T) {
	t.Parallel()
	obs := newObserved()
	f := newFixture(t, func(c *telegram.Config) { c.Observer = obs })
	ctx := ctxT(t)
	gen := f.posts[3]

	f.env.Emu.ResetCalls()
	obs.mu.Lock()
	clear(obs.requests)
	obs.mu.Unlock()
	f.env.Emu.InjectFault(emulator.Fault{Method: "upload.getFile", After: 2, Error: "FLOOD_WAIT_1", Times: 1})
	var big MemFile
	if err := f.acc.Download(ctx, messenger.DownloadRequest{Channel: f.mammoth, MessageID: gen.ID, Document: *gen.Document}, &big); err != nil {
		t.Fatal(err)
	}
	const upSize = 1500 << 10 // 3 parts
	if _, err := f.acc.Upload(ctx, messenger.UploadRequest{Channel: f.dest, FileName: "x.bin",
		Data: io.NewSectionReader(bytes.NewReader(generated(upSize)), 0, upSize)}); err != nil {
		t.Fatal(err)
	}

	obs.mu.Lock()
	defer obs.mu.Unlock()
	calls := f.env.Emu.CallCounts()
	wantRequests := map[string]int{}
	for method := range obs.requests {
		wantRequests[method] = calls[method]
	}
	if !maps.Equal(obs.requests, wantRequests) {
		t.Errorf("requests observed %v, the emulator answered %v", obs.requests, wantRequests)
	}
	if obs.requests["upload.getFile"] != 5 || obs.requests["upload.saveFilePart"] != 3 {
		t.Errorf("requests %v: want 4 chunks and the flooded one again, 3 parts", obs.requests)
	}
	got := struct {
		Floods   map[string]time.Duration
		Down, Up int64
	}{obs.floods, obs.down, obs.up}
	want := struct {
		Floods   map[string]time.Duration
		Down, Up int64
	}{map[string]time.Duration{"upload.getFile": time.Second}, GeneratedSize, upSize}
	if !maps.Equal(got.Floods, want.Floods) || got.Down != want.Down || got.Up != want.Up {
		t.Errorf("observed %+v, want %+v", got, want)
	}
}
