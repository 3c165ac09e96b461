package emulator

import "time"

// partGone reports whether part i of an upload has outlived
// Options.UploadPartLife: the platform keeps uploaded parts "between
// several minutes and several hours" (docs api/files), and a file posted
// after that is answered FILE_PART_X_MISSING. Called under e.mu.
func (e *Emulator) partGone(u *upload, i int) bool {
	life := e.opts.UploadPartLife
	return life > 0 && time.Since(u.stored[i]) > life
}

// SetUploadPartLife changes Options.UploadPartLife while the emulator runs
// (tests let parts expire in milliseconds).
func (e *Emulator) SetUploadPartLife(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.opts.UploadPartLife = d
}

// ExpireUploadedParts makes every part stored so far outlive its life at
// once, as if the platform had dropped it: a file posted with one of them
// is answered FILE_PART_X_MISSING (parts stored later are not affected).
func (e *Emulator) ExpireUploadedParts() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, u := range e.uploads {
		for i := range u.stored {
			u.stored[i] = time.Time{}
		}
	}
}
